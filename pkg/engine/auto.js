// Backend 'auto' after the load, where a hardware WebGPU adapter exists or may (engine/backend.js:
// the adapter's answer is awaited here when the load was ready first): the CPU engine answers
// from the start while the GPU engine is prepared in the background (module, device, pipelines,
// weights upload: `prepare`); then both run the same calibration
// (engine/calibrate.js), one run at a time between requests (`between`: never while a request is
// in flight), and requests move to the GPU only if it measured faster. The choice is remembered
// per (adapter, model SHA-256, version, load options) (storage/choices.js), so a returning page prepares the
// winner without calibrating, or nothing at all when the CPU won.
import { choiceKey } from '../storage/choices.js';
import { sha256Hex } from '../storage/sha256.js';
import { best, decide, measureWorkload } from './calibrate.js';

// Runs per engine, alternating CPU and GPU; each engine's best counts, so the first runs' cold
// code (V8's baseline tier, the GPU's first pipelines in use) weighs on neither. On the embedded
// model a new SIMD session ran it in 381, 150 and 97 ms (a loaded 2-core machine).
const RUNS = 3;

/** The model was disposed or replaced: the background work ends quietly. */
class Stopped extends Error {}

const adapterName = (a) => [a.vendor, a.architecture].filter(Boolean).join(' ') || a.description;

export class AutoBackend {
  #state = 'preparing'; // 'preparing' | 'calibrating' | 'cpu' | 'webgpu' | 'declined'
  #reason;
  #figures = null; // { cpu, webgpu } (calibrate.js measureWorkload), measured or remembered
  #stopped = false;
  #spare = null; // a prepared GPU engine not (yet) serving: freed by stop()
  #bytes; // the model's, until the GPU engine is built from them (then dropped)
  #d;

  /**
   * `d`: `{ here` (backend.js webgpuHere's answer, or its promise), `bytes, sha256` (the model's;
   * the hash is taken when null), `version, config` (the engine's load options, engine/load.js
   * engineConfig), `prepare(bytes, here)` (the GPU engine, `{ session,
   * call, base }`),
   * `measure(engine)` (calibrate.js measureWorkload; tests inject figures), `choices` (a promise
   * of storage/choices.js's store), `between(job)` (runs `job` when no request is in flight),
   * `cpu()` (the serving CPU engine, `{ session, call }`), `adopt(engine)` (moves requests to
   * it), `log(level, message) }`. `settled`: resolves once the choice is made or given up.
   */
  constructor(d) {
    this.#d = { measure: measureWorkload, ...d };
    this.#bytes = d.bytes;
    this.#reason = 'the CPU serves while WebGPU is looked for, prepared and calibrated';
    this.settled = this.#run().catch((e) => {
      this.#freeSpare();
      if (!(e instanceof Stopped))
        this.#set('declined', `WebGPU was not used: ${(e && e.message) || e}`);
    });
  }

  /** info()'s fields for the choice. */
  info() {
    return {
      backend_choice: this.#state,
      backend_reason: this.#reason,
      calibration: this.#figures,
    };
  }

  /** Ends the background work (the model is disposed or replaced) and frees a spare GPU engine. */
  stop() {
    this.#stopped = true;
    this.#freeSpare();
  }

  async #run() {
    const here = await this.#d.here;
    this.#live();
    const declined = here.reason ?? here.software;
    if (declined) return this.#set('declined', declined);
    this.#reason = `the CPU serves while WebGPU (${adapterName(here.adapter)}) is prepared and calibrated`;
    const { version } = this.#d;
    const sha256 = this.#d.sha256 ?? (await sha256Hex(this.#bytes));
    const key = choiceKey(here.adapter, sha256, version, this.#d.config);
    const choices = await this.#d.choices;
    const kept = await choices.get(key);
    this.#live();
    const bytes = this.#bytes;
    this.#bytes = null; // the model's lifetime is long: no second copy held through it
    if (kept && kept.backend === 'cpu')
      return this.#set('cpu', `remembered: ${kept.reason}`, kept.figures);
    this.#spare = await this.#d.prepare(bytes, here);
    this.#live();
    if (kept && kept.backend === 'webgpu')
      return this.#adopt(`remembered: ${kept.reason}`, kept.figures);
    this.#state = 'calibrating';
    const figures = await this.#calibrate(this.#spare);
    const { backend, reason } = decide(figures.cpu, figures.webgpu);
    await choices.put(key, { backend, reason, figures });
    if (backend === 'webgpu') return this.#adopt(reason, figures);
    this.#freeSpare();
    this.#set('cpu', reason, figures);
  }

  /** Both engines' best of RUNS calibration runs, one run per pause between requests. */
  async #calibrate(gpu) {
    let cpu = null;
    let webgpu = null;
    for (let i = 0; i < RUNS; i++) {
      cpu = best(cpu, await this.#between(() => this.#d.measure(this.#d.cpu())));
      webgpu = best(webgpu, await this.#between(() => this.#d.measure(gpu)));
    }
    return { cpu, webgpu };
  }

  async #adopt(reason, figures) {
    await this.#between(async () => {
      this.#d.adopt(this.#spare);
      this.#spare = null;
    });
    this.#set('webgpu', reason, figures);
  }

  /** `job` between two requests, unless the model is gone by then. */
  #between(job) {
    return this.#d.between(async () => {
      this.#live();
      return job();
    });
  }

  #live() {
    if (this.#stopped) throw new Stopped();
  }

  #set(state, reason, figures = this.#figures) {
    this.#state = state;
    this.#reason = reason;
    this.#figures = figures;
    this.#d.log(
      'info',
      `backend 'auto' runs on ${state === 'webgpu' ? 'WebGPU' : 'the CPU'}: ${reason}`,
    );
  }

  #freeSpare() {
    if (this.#spare) this.#spare.session.free();
    this.#spare = null;
  }
}
