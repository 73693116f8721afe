//! Where the prepared dependencies are mounted in a container.

pub const MOUNT: &str = "/deps";
