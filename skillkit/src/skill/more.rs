//! The frontmatter fields most skills leave out, kept out of line: a skill
//! without any of them pays one pointer for them all.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use serde_json::Value;

use super::Metadata;

/// `license`, `compatibility`, `allowed-tools`, `model`, `required_scope`,
/// and the `metadata` and `extra` maps.
#[derive(Clone, Default)]
pub(crate) struct More {
    pub(crate) license: Option<Cow<'static, str>>,
    pub(crate) compatibility: Option<Cow<'static, str>>,
    pub(crate) allowed_tools: Vec<Cow<'static, str>>,
    pub(crate) model: Option<Cow<'static, str>>,
    pub(crate) required_scope: Option<Cow<'static, str>>,
    /// `None` when both maps are empty.
    pub(crate) maps: Option<Box<Maps>>,
}

impl More {
    /// Whether every field is empty (so the skill need not keep it).
    pub(crate) fn is_empty(&self) -> bool {
        let More {
            license,
            compatibility,
            allowed_tools,
            model,
            required_scope,
            maps,
        } = self;
        license.is_none()
            && compatibility.is_none()
            && allowed_tools.is_empty()
            && model.is_none()
            && required_scope.is_none()
            && maps.as_ref().is_none_or(|maps| maps.is_empty())
    }
}

/// The `metadata` and `extra` maps of a skill.
///
/// A `serde_json::Map` is a B-tree whose first node takes about 640 bytes,
/// even for one key, and a catalog query reads neither map. So a loaded
/// skill keeps its maps' entries in two exact-length lists (about 50 bytes
/// per entry) and builds the maps the first time one is asked for.
#[derive(Clone, Default)]
pub(crate) struct Maps {
    /// The entries as read; emptied once the maps are built and edited.
    entries: [Box<[(String, Value)]>; 2],
    built: OnceLock<[Metadata; 2]>,
}

/// Indices into [`Maps`].
pub(crate) const METADATA: usize = 0;
pub(crate) const EXTRA: usize = 1;

/// What the map accessors answer for a skill without maps.
static NO_MAPS: LazyLock<[Metadata; 2]> = LazyLock::new(Default::default);

impl Maps {
    /// The maps of a skill, `None` when both are empty.
    pub(crate) fn new(metadata: Metadata, extra: Metadata) -> Option<Box<Maps>> {
        if metadata.is_empty() && extra.is_empty() {
            return None;
        }
        let entries = [metadata.into_iter().collect(), extra.into_iter().collect()];
        Some(Box::new(Maps {
            entries,
            built: OnceLock::new(),
        }))
    }

    /// Both maps of `maps` (empty ones for `None`).
    pub(crate) fn of(maps: Option<&Maps>) -> &[Metadata; 2] {
        maps.map_or(&NO_MAPS, Maps::get)
    }

    fn get(&self) -> &[Metadata; 2] {
        self.built.get_or_init(|| {
            self.entries
                .each_ref()
                .map(|entries| entries.iter().cloned().collect())
        })
    }

    /// The value of `key` in map `index`, without building the maps (a
    /// catalog-wide check of one key, such as the agent's of
    /// `disable-model-invocation`, leaves them unbuilt).
    pub(crate) fn lookup(&self, index: usize, key: &str) -> Option<&Value> {
        match self.built.get() {
            Some(maps) => maps[index].get(key),
            None => self.entries[index]
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value),
        }
    }

    /// Both maps, to edit.
    pub(crate) fn get_mut(&mut self) -> &mut [Metadata; 2] {
        self.get();
        // The built maps are the truth from now on.
        self.entries = Default::default();
        self.built
            .get_mut()
            .expect("the maps were built just above")
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self.built.get() {
            Some(maps) => maps.iter().all(Metadata::is_empty),
            None => self.entries.iter().all(|entries| entries.is_empty()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, Value)]) -> Metadata {
        entries
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect()
    }

    #[test]
    fn the_maps_read_back_as_given() {
        let metadata = map(&[
            ("version", 1.5.into()),
            ("author", "me".into()),
            ("tags", serde_json::json!(["a", {"b": null}])),
        ]);
        let extra = map(&[("user-invocable", true.into())]);
        let maps = Maps::new(metadata.clone(), extra.clone()).expect("not empty");
        assert_eq!(maps.get()[METADATA], metadata);
        assert_eq!(maps.get()[EXTRA], extra);
        assert!(Maps::new(Metadata::new(), Metadata::new()).is_none());
    }

    #[test]
    fn one_key_is_looked_up_without_building_the_maps() {
        let extra = map(&[("user-invocable", false.into())]);
        let mut maps = Maps::new(Metadata::new(), extra).expect("not empty");
        assert_eq!(
            maps.lookup(EXTRA, "user-invocable"),
            Some(&Value::Bool(false))
        );
        assert_eq!(maps.lookup(EXTRA, "argument-hint"), None);
        assert!(maps.built.get().is_none());
        maps.get_mut()[EXTRA].insert("argument-hint".into(), "<n>".into());
        assert_eq!(
            maps.lookup(EXTRA, "argument-hint"),
            Some(&Value::from("<n>"))
        );
    }

    #[test]
    fn an_edit_is_kept_and_emptying_both_maps_is_seen() {
        let mut maps = Maps::new(map(&[("a", 1.into())]), Metadata::new()).expect("not empty");
        maps.get_mut()[EXTRA].insert("b".into(), 2.into());
        maps.get_mut()[METADATA].remove("a");
        assert_eq!(maps.get()[METADATA], Metadata::new());
        assert_eq!(maps.get()[EXTRA], map(&[("b", 2.into())]));
        assert!(!maps.is_empty());
        maps.get_mut()[EXTRA].clear();
        assert!(maps.is_empty());
        let copy = maps.clone();
        assert!(copy.is_empty());
    }
}
