//! The container reader and model build: any bytes either load (and then run a few tokens in
//! a small session) or give a typed error, within the allocation cap.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::session::{Engine, LoadOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(mut engine) =
        Engine::load(data, &LoadOptions { context: Some(8), ..LoadOptions::default() })
    else {
        return;
    };
    let tok = engine.tokenizer();
    let ids = [tok.bos_id(), tok.eos_id(), 5 % engine.info().vocab as u32];
    let _ = engine.logits_for(&ids);
});
