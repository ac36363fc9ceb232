//! Hand-written option parsing shared by the subcommands: options are taken out by name, and
//! whatever is left over is an error, so every command rejects what it does not understand.
use crate::Failure;

pub struct Args {
    rest: Vec<String>,
}

impl Args {
    pub fn new(rest: Vec<String>) -> Self {
        Self { rest }
    }

    /// Removes `--name` and reports whether it was present.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != name);
        self.rest.len() != before
    }

    /// Removes `--name VALUE` or `--name=VALUE` and returns the value.
    pub fn value(&mut self, name: &str) -> Result<Option<String>, Failure> {
        let prefix = format!("{name}=");
        let Some(i) = self.rest.iter().position(|a| a == name || a.starts_with(&prefix)) else {
            return Ok(None);
        };
        let arg = self.rest.remove(i);
        if let Some(v) = arg.strip_prefix(&prefix) {
            return Ok(Some(v.to_string()));
        }
        if i < self.rest.len() && !self.rest[i].starts_with("--") {
            return Ok(Some(self.rest.remove(i)));
        }
        Err(Failure::Usage(format!("{name} needs a value")))
    }

    /// Like [`Self::value`], but the option must be present.
    pub fn required(&mut self, name: &str) -> Result<String, Failure> {
        self.value(name)?.ok_or_else(|| Failure::Usage(format!("{name} is required")))
    }

    /// Fails on anything no option claimed.
    pub fn finish(self) -> Result<(), Failure> {
        match self.rest.first() {
            None => Ok(()),
            Some(a) => Err(Failure::Usage(format!("unexpected argument '{a}'"))),
        }
    }
}
