//! `needle`: the native command-line driver (feature `cli`).
//!
//! One module per subcommand; each exposes `run(args: Args) -> Result<(), Failure>` and a
//! `USAGE` line, and is listed once in [`COMMANDS`].
mod args;
mod bench;
mod chat;
mod extract;
mod inspect;
mod logits;
mod model;
mod presets;
mod run;
mod snapshot;
mod tokenize;

use std::process::ExitCode;

pub use args::Args;

/// Why a command failed; decides the exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad command line (exit 2).
    Usage(String),
    /// The input was read but refused (exit 1).
    Needle(needle_web::Error),
    /// The input could not be read or the output written (exit 1).
    Io(String, std::io::Error),
    /// Strict extraction found values the input does not license (exit 1): their paths.
    Ungrounded(Vec<String>),
}

impl From<needle_web::Error> for Failure {
    fn from(e: needle_web::Error) -> Self {
        Failure::Needle(e)
    }
}

struct Command {
    name: &'static str,
    usage: &'static str,
    run: fn(Args) -> Result<(), Failure>,
}

const COMMANDS: &[Command] = &[
    Command { name: "inspect", usage: inspect::USAGE, run: inspect::run },
    Command { name: "run", usage: run::USAGE, run: run::run },
    Command { name: "chat", usage: chat::USAGE, run: chat::run },
    Command { name: "extract", usage: extract::USAGE, run: extract::run },
    Command { name: "logits", usage: logits::USAGE, run: logits::run },
    Command { name: "tokenize", usage: tokenize::USAGE, run: tokenize::run },
    Command { name: "detokenize", usage: tokenize::DETOKENIZE_USAGE, run: tokenize::detokenize },
    Command { name: "bench", usage: bench::USAGE, run: bench::run },
    Command { name: "snapshot", usage: snapshot::USAGE, run: snapshot::run },
];

fn usage() -> String {
    let mut s = String::from("usage: needle <command> [options]\n\ncommands:\n");
    for c in COMMANDS {
        s.push_str(&format!("  {}\n", c.usage));
    }
    s.push_str(&format!(
        "\nWithout --model, a command runs the embedded default model (a small Needle 3 trained on\n\
         upstream's six tool environments). --preset NAME gives run one tool set and its system\n\
         prompt: the six, and browser (the extension's; not trained on): {}.\n",
        presets::NAMES.join(", ")
    ));
    s
}

fn main() -> ExitCode {
    let mut argv = std::env::args_os().skip(1);
    let Some(name) = argv.next() else {
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    let name = name.to_string_lossy().into_owned();
    if matches!(name.as_str(), "help" | "-h" | "--help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some(command) = COMMANDS.iter().find(|c| c.name == name) else {
        eprint!("needle: unknown command '{name}'\n\n{}", usage());
        return ExitCode::from(2);
    };
    match (command.run)(Args::new(argv.collect())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("needle {name}: {msg}\nusage: needle {}", command.usage);
            ExitCode::from(2)
        }
        Err(Failure::Needle(e)) => {
            eprintln!("needle {name}: {e} [{}]", e.code());
            ExitCode::from(1)
        }
        Err(Failure::Io(what, e)) => {
            eprintln!("needle {name}: {what}: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Ungrounded(paths)) => {
            eprintln!(
                "needle {name}: values not grounded in the input: {} [ungrounded]",
                paths.join(", ")
            );
            ExitCode::from(1)
        }
    }
}
