//! The CLI's build script (`../build.rs`): the git commit the module is built
//! from, for the provenance files it writes.
include!("../build.rs");
