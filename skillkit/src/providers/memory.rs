//! [`Memory`]: skills put and deleted at run time, seen by the very next query.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use skillkit_parser::{Diagnostic, Severity, kit as kit_rule, name};

use crate::kit::Kit;
use crate::provider::{KitProvider, ProviderError};
use crate::skill::Skill;
use crate::tool::Tool;

/// An in-memory provider: a cheap, cloneable handle (clones share the same
/// store), safe to use from many tasks at once.
///
/// `ns:skill` names group into kit `ns`; a bare name `hello` goes into a kit of
/// that name, as `hello:hello`. [`put`](Memory::put) stores a knowledge skill,
/// [`put_tool`](Memory::put_tool) a skill with the tool that executes it.
///
/// ```
/// use skillkit::{Memory, Skill};
///
/// let memory = Memory::new();
/// memory.put(Skill::new("greet:hello", "Say hello."));
/// memory.put(Skill::new("greet:bye", "Say goodbye."));
/// memory.put(Skill::new("solo", "A bare name."));
/// assert_eq!(memory.kit_names(), ["greet", "solo"]);
/// assert!(memory.delete("greet:bye"));
/// assert!(memory.get("solo:solo").is_some());
/// ```
#[derive(Clone, Default)]
pub struct Memory {
    store: Arc<RwLock<Store>>,
}

#[derive(Default)]
struct Store {
    kits: BTreeMap<String, Kit>,
    /// The tools of executable skills, by full name.
    tools: HashMap<String, Arc<dyn Tool>>,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("kits", &self.kit_names())
            .finish()
    }
}

/// The kit and full name of skill name `name`, read by the rule every
/// provider follows ([`name::qualify`]): the whitespace around the name and
/// around each of its parts is not part of it.
fn place(name: &str) -> (String, String) {
    let (kit, bare) = match name::split(name.trim()) {
        (Some(kit), bare) if !kit.trim().is_empty() && !bare.trim().is_empty() => {
            (kit.trim(), bare.trim())
        }
        (_, bare) => {
            let bare = bare.trim_start_matches(name::SEPARATOR).trim();
            (bare, bare)
        }
    };
    (kit.to_owned(), format!("{kit}{}{bare}", name::SEPARATOR))
}

impl Memory {
    /// An empty store.
    ///
    /// ```
    /// assert!(skillkit::Memory::new().kit_names().is_empty());
    /// ```
    pub fn new() -> Self {
        Memory::default()
    }

    fn read<T>(&self, f: impl FnOnce(&Store) -> T) -> T {
        f(&self.store.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn write<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        f(&mut self.store.write().unwrap_or_else(PoisonError::into_inner))
    }

    /// Adds knowledge skill `skill`, or replaces the skill of the same full
    /// name (and any tool it had). Returns the full name it is stored under.
    ///
    /// ```
    /// let memory = skillkit::Memory::new();
    /// assert_eq!(memory.put(skillkit::Skill::new("hello", "Hi.")), "hello:hello");
    /// ```
    pub fn put(&self, skill: impl Into<Skill>) -> String {
        self.insert(skill.into(), None)
    }

    /// Adds `skill` executed by `tool`, or replaces the skill of the same full
    /// name. An agent sees it as a tool of its own from its next turn.
    ///
    /// ```
    /// use skillkit::{Memory, Skill, Tool, ToolExecution, ToolOutcome};
    /// struct Echo;
    /// #[skillkit::async_trait]
    /// impl Tool for Echo {
    ///     async fn execute(&self, e: ToolExecution) -> ToolOutcome { ToolOutcome::ok(e.input) }
    /// }
    /// let memory = Memory::new();
    /// assert_eq!(memory.put_tool(Skill::new("util:echo", "Echo the input."), Echo), "util:echo");
    /// assert!(memory.has_tool("util:echo"));
    /// ```
    pub fn put_tool(&self, skill: impl Into<Skill>, tool: impl Tool + 'static) -> String {
        self.insert(skill.into(), Some(Arc::new(tool)))
    }

    fn insert(&self, mut skill: Skill, tool: Option<Arc<dyn Tool>>) -> String {
        let (kit, full) = place(&skill.name);
        skill.name = Cow::Owned(full.clone());
        self.write(|store| {
            store
                .kits
                .entry(kit.clone())
                .or_insert_with(|| Kit::new(kit))
                .insert_skill(skill);
            match tool {
                Some(tool) => store.tools.insert(full.clone(), tool),
                None => store.tools.remove(&full),
            };
        });
        full
    }

    /// Whether skill `name` is stored with a tool.
    ///
    /// ```
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("a:x", "X."));
    /// assert!(!memory.has_tool("a:x"));
    /// ```
    pub fn has_tool(&self, name: &str) -> bool {
        let (_, full) = place(name);
        self.read(|store| store.tools.contains_key(&full))
    }

    /// Removes the skill named `name` (`kit:skill`, or a bare name as given to
    /// [`put`](Memory::put)). Returns whether it was there. A kit left with no
    /// skills and no agents goes too.
    ///
    /// ```
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("a:x", "X."));
    /// assert!(memory.delete("a:x"));
    /// assert!(!memory.delete("a:x"));
    /// assert!(memory.kit_names().is_empty());
    /// ```
    pub fn delete(&self, name: &str) -> bool {
        let (kit, full) = place(name);
        self.write(|store| {
            store.tools.remove(&full);
            let Some(entry) = store.kits.get_mut(&kit) else {
                return false;
            };
            let before = entry.skills.len();
            entry.skills.make_mut().retain(|s| s.name != full);
            let removed = entry.skills.len() != before;
            if entry.skills.is_empty() && entry.agent.is_none() && entry.agents.is_empty() {
                store.kits.remove(&kit);
            }
            removed
        })
    }

    /// Adds or replaces a whole kit of knowledge skills (tools the replaced
    /// kit's skills had are dropped). Bare skill names in it get the kit's
    /// prefix.
    ///
    /// ```
    /// let memory = skillkit::Memory::new();
    /// memory.put_kit(skillkit::Kit::new("files").with_skill(skillkit::Skill::new("read", "Read.")));
    /// assert!(memory.get("files:read").is_some());
    /// ```
    pub fn put_kit(&self, mut kit: Kit) {
        let kit_name = kit.name.to_string();
        let mut skills = Vec::with_capacity(kit.skills.len());
        for skill in std::mem::take(&mut kit.skills).iter().cloned() {
            match kit_rule::qualify(&kit_name, &kit_rule::Declared::new(&skill.name)) {
                Ok(member) if member.name == skill.name => skills.push(skill),
                Ok(member) => {
                    let mut owned = (*skill).clone();
                    owned.name = Cow::Owned(member.name);
                    skills.push(Arc::new(owned));
                }
                Err(problem) => {
                    tracing::warn!(provider = "memory", kit = %kit_name, "skill skipped: {}", problem.message);
                    kit.diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        ..problem
                    });
                }
            }
        }
        kit.diagnostics.extend(kit_rule::dedup(
            &mut skills,
            "skill",
            Severity::Warning,
            |s| kit_rule::Declared::new(&s.name),
        ));
        self.write(|store| {
            // A skill that had a tool is knowledge now: a new value says so
            // to whoever kept the old one (an agent reuses its tools while
            // the skill values it saw are unchanged).
            for skill in &mut skills {
                if store.tools.remove(skill.name.as_ref()).is_some() {
                    *skill = Arc::new(Skill::clone(skill));
                }
            }
            kit.skills = skills.into();
            drop_tools(store, &kit_name);
            store.kits.insert(kit_name, kit)
        });
    }

    /// Removes the kit named `name`; returns whether it was there.
    ///
    /// ```
    /// let memory = skillkit::Memory::new();
    /// memory.put(skillkit::Skill::new("a:x", "X."));
    /// assert!(memory.delete_kit("a"));
    /// ```
    pub fn delete_kit(&self, name: &str) -> bool {
        self.write(|store| {
            drop_tools(store, name);
            store.kits.remove(name).is_some()
        })
    }

    /// The skill named `name`, if stored.
    ///
    /// ```
    /// assert!(skillkit::Memory::new().get("a:x").is_none());
    /// ```
    pub fn get(&self, name: &str) -> Option<Arc<Skill>> {
        let (kit, full) = place(name);
        self.read(|store| store.kits.get(&kit)?.skill(&full).cloned())
    }

    /// The names of the stored kits, sorted.
    ///
    /// ```
    /// assert!(skillkit::Memory::new().kit_names().is_empty());
    /// ```
    pub fn kit_names(&self) -> Vec<String> {
        self.read(|store| store.kits.keys().cloned().collect())
    }
}

/// Drops the tools of the skills of kit `kit`.
fn drop_tools(store: &mut Store, kit: &str) {
    if let Some(old) = store.kits.get(kit) {
        for skill in &old.skills {
            store.tools.remove(skill.name.as_ref());
        }
    }
}

// Not listed when a type is not a provider: the note on `KitProvider` says
// what to write, and the list of SkillKit's own providers would not help.
#[diagnostic::do_not_recommend]
#[async_trait::async_trait]
impl KitProvider for Memory {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("memory")
    }

    async fn list_kits(&self) -> Result<Vec<Kit>, ProviderError> {
        Ok(self.read(|store| store.kits.values().cloned().collect()))
    }

    async fn get_kit(&self, name: &str) -> Result<Option<Kit>, ProviderError> {
        Ok(self.read(|store| store.kits.get(name).cloned()))
    }

    fn tool(self: Arc<Self>, skill: &Skill) -> Option<Arc<dyn Tool>> {
        self.read(|store| store.tools.get(skill.name.as_ref()).cloned())
    }
}
