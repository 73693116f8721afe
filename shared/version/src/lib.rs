//! Version ordering and OSV range evaluation with each ecosystem's own rules.
