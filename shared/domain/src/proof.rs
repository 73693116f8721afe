use std::fmt;
use std::str::FromStr;

/// How strongly a finding is proved. Declared strongest first; `Ord` follows declaration
/// order, so `min()` over a finding's evidence gives its strongest level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofLevel {
    /// A test fails on the change and passes on the base, run in the sandbox.
    Reproduced,
    /// An advisory match whose CVE is in CISA's Known Exploited Vulnerabilities catalogue.
    Exploited,
    /// A dependency version inside an advisory's affected range.
    Advisory,
    /// An analyzer run in the sandbox reported it.
    Tool,
}

impl ProofLevel {
    /// Every level, strongest first.
    pub const ALL: [ProofLevel; 4] = [
        ProofLevel::Reproduced,
        ProofLevel::Exploited,
        ProofLevel::Advisory,
        ProofLevel::Tool,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProofLevel::Reproduced => "reproduced",
            ProofLevel::Exploited => "exploited",
            ProofLevel::Advisory => "advisory",
            ProofLevel::Tool => "tool",
        }
    }
}

impl fmt::Display for ProofLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProofLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProofLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown proof level {s:?} (allowed: reproduced, exploited, advisory, tool)"
                )
            })
    }
}

/// Findings counted by proof level, every level present (zero where none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProofCounts([u32; 4]);

impl ProofCounts {
    pub fn from_levels(levels: impl IntoIterator<Item = ProofLevel>) -> Self {
        let mut counts = ProofCounts::default();
        for level in levels {
            counts.0[level as usize] += 1;
        }
        counts
    }

    pub fn get(&self, level: ProofLevel) -> u32 {
        self.0[level as usize]
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// `(level, count)` for every level, strongest first.
    pub fn iter(&self) -> impl Iterator<Item = (ProofLevel, u32)> + '_ {
        ProofLevel::ALL.into_iter().map(|l| (l, self.get(l)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strongest_level_is_the_minimum() {
        let levels = [
            ProofLevel::Advisory,
            ProofLevel::Exploited,
            ProofLevel::Tool,
        ];
        assert_eq!(levels.into_iter().min(), Some(ProofLevel::Exploited));
    }

    #[test]
    fn counts_list_every_level() {
        let counts = ProofCounts::from_levels([ProofLevel::Advisory, ProofLevel::Advisory]);
        let all: Vec<_> = counts.iter().collect();
        assert_eq!(
            all,
            vec![
                (ProofLevel::Reproduced, 0),
                (ProofLevel::Exploited, 0),
                (ProofLevel::Advisory, 2),
                (ProofLevel::Tool, 0)
            ]
        );
        assert_eq!(counts.total(), 2);
    }
}
