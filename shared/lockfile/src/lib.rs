//! Readers for lock files and manifests: which packages a project uses, at which versions.
