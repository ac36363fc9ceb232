//! The one typed error of the crate. Every refusal names what was wrong and where;
//! [`Error::code`] gives a stable string the JS side can switch on.
use alloc::string::String;
use core::fmt;

pub type Result<T, E = Error> = core::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The first four bytes are not a known `.cact` tag.
    BadTag { found: u32 },
    /// A valid container of the other generation was handed to a generation-specific reader.
    WrongGeneration { expected: u8, found: u8 },
    /// A section runs past the end of the input.
    Truncated { section: &'static str, needed: u64, available: u64 },
    /// A header field holds an impossible value.
    BadHeader { field: &'static str, value: u64, reason: &'static str },
    /// A directory record (by position) is wrong in one field.
    BadTensor { index: u32, field: &'static str, reason: &'static str },
    /// The RAW tokenizer attachment is malformed.
    BadTokenizer { offset: u64, reason: &'static str },
    /// A token id is outside the vocabulary.
    TokenOutOfVocab { id: u32, vocab: u32 },
    /// The sequence would exceed the model's context.
    ContextFull { needed: usize, max: usize },
    /// Tool JSON (or another JSON input) does not parse.
    BadJson { offset: usize, reason: &'static str },
    /// Bytes that must be UTF-8 are not.
    InvalidUtf8 { offset: usize },
    /// A caller-supplied option is out of range.
    InvalidArgument { name: &'static str, reason: &'static str },
    /// A well-formed input asks for something this runtime does not do.
    Unsupported { what: &'static str },
    /// A tool's schema holds something structured output cannot hold (or that no value meets),
    /// or is malformed (`malformed`); `path` is the tool and a JSON Pointer into its parameters.
    Schema { what: &'static str, path: String, malformed: bool },
    /// A prefix snapshot is not one, or is corrupt or truncated.
    BadSnapshot { reason: &'static str },
    /// A sound prefix snapshot made from another model, format version or engine option.
    SnapshotMismatch { field: &'static str },
    /// The GPU backend found no usable adapter, or one whose limits a tensor exceeds.
    GpuUnavailable { reason: String },
    /// The GPU device was lost, or a submitted step failed (the sequence is no longer valid).
    GpuLost { reason: String },
}

impl Error {
    /// Stable machine-readable code (crosses into JS as `error.code`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::BadTag { .. } => "bad_tag",
            Error::WrongGeneration { .. } => "wrong_generation",
            Error::Truncated { .. } => "truncated",
            Error::BadHeader { .. } => "bad_header",
            Error::BadTensor { .. } => "bad_tensor",
            Error::BadTokenizer { .. } => "bad_tokenizer",
            Error::TokenOutOfVocab { .. } => "token_out_of_vocab",
            Error::ContextFull { .. } => "context_full",
            Error::BadJson { .. } => "bad_json",
            Error::InvalidUtf8 { .. } => "invalid_utf8",
            Error::InvalidArgument { .. } => "invalid_argument",
            Error::Unsupported { .. } | Error::Schema { malformed: false, .. } => "unsupported",
            Error::Schema { malformed: true, .. } => "invalid_argument",
            Error::BadSnapshot { .. } => "bad_snapshot",
            Error::SnapshotMismatch { .. } => "snapshot_mismatch",
            Error::GpuUnavailable { .. } => "gpu_unavailable",
            Error::GpuLost { .. } => "gpu_lost",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadTag { found } => write!(f, "not a .cact container (tag {found:#010x})"),
            Error::WrongGeneration { expected, found } => {
                write!(f, "expected a Needle {expected} container, found Needle {found}")
            }
            Error::Truncated { section, needed, available } => {
                write!(
                    f,
                    "truncated container: {section} needs {needed} bytes, {available} available"
                )
            }
            Error::BadHeader { field, value, reason } => {
                write!(f, "bad header field {field} = {value}: {reason}")
            }
            Error::BadTensor { index, field, reason } => {
                write!(f, "bad tensor #{index}, field {field}: {reason}")
            }
            Error::BadTokenizer { offset, reason } => {
                write!(f, "bad tokenizer attachment at byte {offset}: {reason}")
            }
            Error::TokenOutOfVocab { id, vocab } => {
                write!(f, "token id {id} is outside the vocabulary of {vocab}")
            }
            Error::ContextFull { needed, max } => {
                write!(f, "sequence of {needed} tokens exceeds the context of {max}")
            }
            Error::BadJson { offset, reason } => {
                write!(f, "invalid JSON at byte {offset}: {reason}")
            }
            Error::InvalidUtf8 { offset } => write!(f, "invalid UTF-8 at byte {offset}"),
            Error::InvalidArgument { name, reason } => {
                write!(f, "invalid argument {name}: {reason}")
            }
            Error::Unsupported { what } => write!(f, "unsupported: {what}"),
            Error::Schema { what, path, malformed: false } => {
                write!(f, "unsupported: {what} at {path}")
            }
            Error::Schema { what, path, malformed: true } => {
                write!(f, "invalid argument schema: {what} at {path}")
            }
            Error::BadSnapshot { reason } => write!(f, "bad prefix snapshot: {reason}"),
            Error::SnapshotMismatch { field } => {
                write!(f, "prefix snapshot made with another {field} than this engine's")
            }
            Error::GpuUnavailable { reason } => write!(f, "GPU backend unavailable: {reason}"),
            Error::GpuLost { reason } => write!(f, "GPU device lost: {reason}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
