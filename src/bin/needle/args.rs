//! Hand-written option parsing shared by the subcommands: options are taken out by name, and
//! whatever is left over is an error, so every command rejects what it does not understand.
//!
//! Arguments arrive as the OS gave them (`args_os`): a value that is not UTF-8 is refused as
//! `invalid_argument` (exit 1) when its option is taken, never a panic; a model path is taken
//! as it is ([`Args::path`]).
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::Failure;

pub struct Args {
    rest: Vec<OsString>,
}

/// The refusal of a value (or a stray argument) that is not UTF-8.
fn not_utf8(name: &'static str) -> Failure {
    Failure::Needle(needle_web::Error::InvalidArgument { name, reason: "not valid UTF-8" })
}

impl Args {
    pub fn new(rest: Vec<OsString>) -> Self {
        Self { rest }
    }

    /// Removes `--name` and reports whether it was present.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != name);
        self.rest.len() != before
    }

    /// Removes `--name VALUE` or `--name=VALUE` and returns the value.
    pub fn value(&mut self, name: &'static str) -> Result<Option<String>, Failure> {
        self.value_os(name)?.map(|v| v.into_string().map_err(|_| not_utf8(name))).transpose()
    }

    /// [`Self::value`] for a file path, as the OS gave it: a path need not be UTF-8 (Linux
    /// allows any bytes but `/` and NUL in a name).
    pub fn path(&mut self, name: &'static str) -> Result<Option<PathBuf>, Failure> {
        Ok(self.value_os(name)?.map(PathBuf::from))
    }

    fn value_os(&mut self, name: &'static str) -> Result<Option<OsString>, Failure> {
        let prefix = format!("{name}=");
        let is_option =
            |a: &OsString| a == name || a.as_encoded_bytes().starts_with(prefix.as_bytes());
        let Some(i) = self.rest.iter().position(is_option) else {
            return Ok(None);
        };
        let arg = self.rest.remove(i);
        if arg != name {
            let value = &arg.as_encoded_bytes()[prefix.len()..];
            // SAFETY: split right after `=`, an ASCII character ending a valid UTF-8 prefix,
            // which `from_encoded_bytes_unchecked` allows.
            return Ok(Some(unsafe { OsStr::from_encoded_bytes_unchecked(value) }.to_owned()));
        }
        let next_is_value =
            self.rest.get(i).is_some_and(|a| !a.as_encoded_bytes().starts_with(b"--"));
        if next_is_value {
            return Ok(Some(self.rest.remove(i)));
        }
        Err(Failure::Usage(format!("{name} needs a value")))
    }

    /// Like [`Self::value`], but the option must be present.
    pub fn required(&mut self, name: &'static str) -> Result<String, Failure> {
        self.value(name)?.ok_or_else(|| Failure::Usage(format!("{name} is required")))
    }

    /// Fails on anything no option claimed.
    pub fn finish(self) -> Result<(), Failure> {
        match self.rest.first() {
            None => Ok(()),
            Some(a) => match a.to_str() {
                Some(a) => Err(Failure::Usage(format!("unexpected argument '{a}'"))),
                None => Err(not_utf8("argument")),
            },
        }
    }
}
