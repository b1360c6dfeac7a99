//! Wire-safe tool names: what vendors accept (`[a-zA-Z0-9_-]{1,64}`), mapped
//! both ways to the full names the agent knows (`files:read`).

use std::borrow::Cow;
use std::collections::HashMap;

/// The longest tool name vendors accept.
pub(crate) const MAX_LEN: usize = 64;

/// Whether vendors accept `name` as a tool name.
pub(crate) fn is_wire_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `name` with every byte vendors refuse replaced by `_`, cut to 64 bytes.
/// Not unique on its own: [`WireNames`] makes it so.
pub(crate) fn sanitize(name: &str) -> Cow<'_, str> {
    if is_wire_safe(name) {
        return Cow::Borrowed(name);
    }
    let mut out: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out.truncate(MAX_LEN);
    Cow::Owned(out)
}

/// A name's 8-hex-digit FNV-1a hash: stable across runs and platforms.
fn hash8(name: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in name.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// The two-way map of one turn's tool names.
///
/// A full name that is already wire-safe is sent as is. Any other is
/// sanitised (`files:read` → `files_read`); when that is longer than 64 bytes,
/// or when two names of the set would meet on one wire name, each of the
/// colliding names that was changed gets a suffix made from a hash of its full
/// name (`files_read_1c2f…`), so the assignment depends only on the set of
/// names, never on their order, and a name keeps its wire name on every turn
/// where the same names exist.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireNames {
    to_wire: HashMap<String, String>,
    to_full: HashMap<String, String>,
}

impl WireNames {
    /// The map of `names` (full names, unique).
    pub(crate) fn assign<'a>(names: impl IntoIterator<Item = &'a str>) -> WireNames {
        let names: Vec<&str> = names.into_iter().collect();
        let mut claims: HashMap<Cow<'_, str>, Vec<&str>> = HashMap::with_capacity(names.len());
        for &name in &names {
            claims.entry(sanitize(name)).or_default().push(name);
        }
        let mut map = WireNames {
            to_wire: HashMap::with_capacity(names.len()),
            to_full: HashMap::with_capacity(names.len()),
        };
        for (wire, claimants) in &claims {
            for &name in claimants {
                let changed = wire.as_ref() != name;
                let suffixed = changed && (claimants.len() > 1 || name.len() > MAX_LEN);
                let wire = match suffixed {
                    false => wire.to_string(),
                    true => {
                        let mut cut = wire.to_string();
                        cut.truncate(MAX_LEN - 9);
                        format!("{cut}_{}", hash8(name))
                    }
                };
                map.to_full.insert(wire.clone(), name.to_owned());
                map.to_wire.insert(name.to_owned(), wire);
            }
        }
        map
    }

    /// The wire name of full name `name`; a name outside the map (a tool of
    /// an earlier turn that is gone) is sanitised, so the history stays
    /// sendable.
    pub(crate) fn wire<'a>(&'a self, name: &'a str) -> Cow<'a, str> {
        match self.to_wire.get(name) {
            Some(wire) => Cow::Borrowed(wire),
            None => sanitize(name),
        }
    }

    /// The full name a model's tool call `wire` means, if it is one of this
    /// turn's tools.
    pub(crate) fn full(&self, wire: &str) -> Option<&str> {
        self.to_full.get(wire).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_names_become_wire_safe_and_map_back() {
        let names = WireNames::assign(["files:read", "notes:search", "activate_skill"]);
        assert_eq!(names.wire("files:read"), "files_read");
        assert_eq!(names.wire("activate_skill"), "activate_skill");
        assert_eq!(names.full("files_read"), Some("files:read"));
        assert_eq!(names.full("notes_search"), Some("notes:search"));
        assert_eq!(names.full("files:read"), None);
    }

    #[test]
    fn names_that_sanitise_alike_stay_apart() {
        let names = WireNames::assign(["files:read", "files_read", "files.read"]);
        // The name that needed no change keeps it; the others get a hash suffix.
        assert_eq!(names.wire("files_read"), "files_read");
        let a = names.wire("files:read").into_owned();
        let b = names.wire("files.read").into_owned();
        assert_ne!(a, b);
        assert_ne!(a, "files_read");
        for wire in [&a, &b] {
            assert!(is_wire_safe(wire), "{wire}");
            assert!(wire.starts_with("files_read_"));
        }
        assert_eq!(names.full(&a), Some("files:read"));
        assert_eq!(names.full(&b), Some("files.read"));
    }

    #[test]
    fn long_names_are_cut_to_64_and_stay_unique() {
        let stem = "k".repeat(40);
        let first = format!("{stem}:{}", "a".repeat(40));
        let second = format!("{stem}:{}b", "a".repeat(40));
        let names = WireNames::assign([first.as_str(), second.as_str()]);
        let (a, b) = (names.wire(&first), names.wire(&second));
        assert!(a.len() <= MAX_LEN && b.len() <= MAX_LEN);
        assert!(is_wire_safe(&a) && is_wire_safe(&b));
        assert_ne!(a, b);
        assert_eq!(names.full(&a), Some(first.as_str()));
        assert_eq!(names.full(&b), Some(second.as_str()));
    }

    #[test]
    fn the_assignment_does_not_depend_on_order() {
        let forward = WireNames::assign(["a:b", "a_b", "a.b", "z:y"]);
        let backward = WireNames::assign(["z:y", "a.b", "a_b", "a:b"]);
        for name in ["a:b", "a_b", "a.b", "z:y"] {
            assert_eq!(forward.wire(name), backward.wire(name));
        }
    }

    #[test]
    fn unknown_names_are_sanitised_not_dropped() {
        let names = WireNames::assign(["a:b"]);
        assert_eq!(names.wire("gone:skill"), "gone_skill");
        assert_eq!(sanitize("日本"), "__");
        assert_eq!(sanitize(""), "_");
    }
}
