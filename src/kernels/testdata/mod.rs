//! Generated test data (see the generator scripts beside it).
pub(crate) mod cq_upstream;
