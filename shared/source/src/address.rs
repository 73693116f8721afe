//! Which addresses are on the public internet.
//!
//! std classifies the common ranges (`is_private`, `is_loopback`, ...) but its `is_global`
//! is not stable, and a few special-purpose ranges (shared address space, benchmarking,
//! NAT64, 6to4) have no stable method: they are written out here from the IANA
//! special-purpose registries. Addresses that embed an IPv4 address (IPv4-mapped, NAT64,
//! 6to4) are judged by the address they reach.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not a public address (`None` when it is public).
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if a == 192 && b == 0 && c == 0 {
        Some("IETF protocol assignment")
    } else if ip.is_documentation() {
        Some("documentation")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("benchmarking")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() || a >= 240 {
        Some("reserved")
    } else {
        None
    }
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return non_public_v4(embedded_v4(s[6], s[7]));
    }
    // 6to4 (2002::/16) reaches the IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return non_public_v4(embedded_v4(s[1], s[2]));
    }
    if ip.is_unspecified() {
        Some("unspecified")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unique_local() || (s[0] & 0xffc0) == 0xfec0 || s[..3] == [0x64, 0xff9b, 1] {
        // fc00::/7 unique local, fec0::/10 site-local (deprecated), 64:ff9b:1::/48 local NAT64.
        Some("private")
    } else if ip.is_unicast_link_local() {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("documentation")
    } else if s[..6] == [0, 0, 0, 0, 0, 0]
        || s[..4] == [0x100, 0, 0, 0]
        || (s[0] == 0x2001 && s[1] < 0x200)
    {
        // ::/96 IPv4-compatible (deprecated), 100::/64 discard, 2001::/23 IETF assignments
        // (Teredo among them).
        Some("reserved")
    } else {
        None
    }
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        non_public(s.parse().expect("address"))
    }

    #[test]
    fn special_purpose_addresses_are_not_public() {
        for (ip, why) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("192.0.0.8", "IETF protocol assignment"),
            ("192.0.2.1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
            ("240.0.0.1", "reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::7f00:1", "loopback"),
            ("2002:a00:1::", "private"),
            ("fd00::1", "private"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("::127.0.0.1", "reserved"),
            ("2001::1", "reserved"),
        ] {
            assert_eq!(reason(ip), Some(why), "{ip}");
        }
    }

    #[test]
    fn public_addresses_are_public() {
        for ip in [
            "140.82.112.3",
            "1.1.1.1",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:140.82.112.3",
            "64:ff9b::8c52:7003",
        ] {
            assert_eq!(reason(ip), None, "{ip}");
        }
    }
}
