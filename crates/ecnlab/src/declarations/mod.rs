//! Declarations and the reading of an experiment: the registry of every
//! scheme, congestion control, profile and mechanism (`registry.rs`),
//! `ecnlab keys` and the reference it prints (`keys.rs`), reading an
//! experiment file whole with every check in order (`load.rs`), the
//! resource guard (`budget.rs`) and the warnings for settings that cannot
//! act where they are (`warnings.rs`). The file's tables themselves, and
//! the `section!` declarations every scheme writes, are `config/`, a room
//! of its own: everything reads it, and these files read everything.

pub mod budget;
pub mod keys;
pub mod load;
pub mod registry;
pub mod warnings;
