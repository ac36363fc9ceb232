//! `--preset NAME`: the tool sets and system prompts of upstream's six tool environments and the
//! browser environment the extension acts with (the demo page's presets, `www/presets/`), built in
//! so `needle run` on the embedded model needs no file at all.
use needle_web::json::{self, Value};

use crate::{Args, Failure};

macro_rules! presets {
    ($($name:literal),*) => {
        pub const NAMES: &[&str] = &[$($name),*];
        const FILES: &[&str] = &[$(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/www/presets/", $name, ".json"))),*];
    };
}
presets!(
    "smart_home",
    "media_player",
    "kitchen_appliance",
    "productivity",
    "wearable",
    "data_capture",
    "browser"
);

/// A preset's tools (JSON text) and system prompt.
pub struct Preset {
    pub tools: String,
    pub system: Option<String>,
}

pub fn get(name: &str) -> Result<Preset, Failure> {
    let Some(i) = NAMES.iter().position(|&n| n == name) else {
        return Err(Failure::Usage(format!(
            "unknown preset '{name}' (one of {})",
            NAMES.join(", ")
        )));
    };
    let env = json::parse(FILES[i])?;
    let tools = env.get("tools").map(Value::to_json).unwrap_or_default();
    Ok(Preset { tools, system: env.get("system").and_then(Value::as_str).map(str::to_owned) })
}

/// Takes `--preset NAME` or `--tools T.json`, and `--system S` (which replaces a preset's): the
/// tool list as JSON text (empty: none) and the system prompt.
pub fn tools_and_system(args: &mut Args) -> Result<(String, Option<String>), Failure> {
    let preset = args.value("--preset")?.map(|name| get(&name)).transpose()?;
    let tools = match (args.value("--tools")?, &preset) {
        (Some(_), Some(_)) => {
            return Err(Failure::Usage("--preset and --tools both give the tools: pass one".into()))
        }
        (Some(path), None) => std::fs::read_to_string(&path).map_err(|e| Failure::Io(path, e))?,
        (None, Some(p)) => p.tools.clone(),
        (None, None) => String::new(),
    };
    let system = args.value("--system")?.or_else(|| preset.and_then(|p| p.system));
    Ok((tools, system))
}
