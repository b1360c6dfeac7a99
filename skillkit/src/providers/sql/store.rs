//! The write API of [`Sql`]: put and delete skills, agents and whole kits,
//! import a kit directory. Each call is one transaction that bumps the
//! revision first, so writers from every process queue on one row and
//! readers see each write whole or not at all.

use std::sync::atomic::{AtomicBool, Ordering};

use skillkit_parser::name;

use super::rows::{AgentRow, SkillRow, bare_name, check_kit};
use super::{Pool, Sql, SqlError, on_pool, schema, step};
use crate::agent_definition::AgentDefinition;
use crate::kit::Kit;
use crate::provider::KitProvider;
use crate::providers::Local;
use crate::skill::Skill;

/// One change of a write.
enum Op {
    PutSkill(SkillRow),
    /// Tombstones skill `name` (bare) of `kit`.
    DeleteSkill {
        kit: String,
        name: String,
    },
    PutAgent(AgentRow),
    /// Tombstones agent `name` (bare, for a sub-agent) of `kit`.
    DeleteAgent {
        kit: String,
        root: bool,
        name: String,
    },
    /// Tombstones the root agent of `kit` unless it is named `keep`.
    ReplaceRoot {
        kit: String,
        keep: String,
    },
    /// Tombstones every skill of `kit`.
    ClearSkills(String),
    /// Tombstones every agent of `kit`.
    ClearAgents(String),
}

impl Sql {
    /// Adds or replaces skill `skill` of kit `kit`. Its name is the bare name
    /// (`read`) or carries this kit's prefix (`files:read`); a name naming
    /// another kit or breaking the Agent Skills charset, or an empty
    /// description, is refused with the rule. Returns the revision written.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{KitProvider, Skill, Sql};
    /// let sql = Sql::open("sqlite::memory:").unwrap();
    /// sql.put_skill("files", &Skill::new("read", "Read a file.").with_body("Read $ARGUMENTS."))
    ///     .await
    ///     .unwrap();
    /// let refused = sql.put_skill("files", &Skill::new("net:fetch", "Fetch.")).await.unwrap_err();
    /// assert!(refused.to_string().contains("names kit `net`"));
    /// let kit = sql.get_kit("files").await.unwrap().unwrap();
    /// assert_eq!(kit.skills[0].name, "files:read");
    /// # });
    /// ```
    pub async fn put_skill(&self, kit: &str, skill: &Skill) -> Result<i64, SqlError> {
        let row = SkillRow::of(kit, skill)?;
        self.write(vec![Op::PutSkill(row)]).await.map(written)
    }

    /// Removes skill `name` (bare or `kit:`-prefixed) of kit `kit`; returns
    /// whether it was there. A kit left with no rows is gone from the answers.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let sql = skillkit::Sql::open("sqlite::memory:").unwrap();
    /// sql.put_skill("files", &skillkit::Skill::new("read", "Read a file.")).await.unwrap();
    /// assert!(sql.delete_skill("files", "files:read").await.unwrap());
    /// assert!(!sql.delete_skill("files", "read").await.unwrap());
    /// # });
    /// ```
    pub async fn delete_skill(&self, kit: &str, name: &str) -> Result<bool, SqlError> {
        let name = bare_name(kit, name)?;
        let kit = kit.to_owned();
        Ok(self
            .write(vec![Op::DeleteSkill { kit, name }])
            .await?
            .is_some())
    }

    /// Adds or replaces sub-agent `agent` of kit `kit` (an `agents/<name>.md`;
    /// its name bare or `kit:`-prefixed, served as `kit:<name>`).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{AgentDefinition, KitProvider, Sql};
    /// let sql = Sql::open("sqlite::memory:").unwrap();
    /// let summarize = AgentDefinition::new("summarize", "Summarises text.").with_system_prompt("Be brief.");
    /// sql.put_agent("files", &summarize).await.unwrap();
    /// let kit = sql.get_kit("files").await.unwrap().unwrap();
    /// assert_eq!(kit.agents[0].name, "files:summarize");
    /// # });
    /// ```
    pub async fn put_agent(&self, kit: &str, agent: &AgentDefinition) -> Result<i64, SqlError> {
        let row = AgentRow::of(kit, false, agent)?;
        self.write(vec![Op::PutAgent(row)]).await.map(written)
    }

    /// Makes `agent` the root agent of kit `kit` (its `AGENT.md`), replacing
    /// the one it had.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{AgentDefinition, KitProvider, Sql};
    /// let sql = Sql::open("sqlite::memory:").unwrap();
    /// sql.put_root_agent("files", &AgentDefinition::new("files", "Finds files.")).await.unwrap();
    /// let kit = sql.get_kit("files").await.unwrap().unwrap();
    /// assert_eq!(kit.agent.unwrap().description, "Finds files.");
    /// # });
    /// ```
    pub async fn put_root_agent(
        &self,
        kit: &str,
        agent: &AgentDefinition,
    ) -> Result<i64, SqlError> {
        let row = AgentRow::of(kit, true, agent)?;
        let replace = Op::ReplaceRoot {
            kit: kit.to_owned(),
            keep: row.name.clone(),
        };
        self.write(vec![replace, Op::PutAgent(row)])
            .await
            .map(written)
    }

    /// Removes sub-agent `name` (bare or `kit:`-prefixed) of kit `kit`;
    /// returns whether it was there.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let sql = skillkit::Sql::open("sqlite::memory:").unwrap();
    /// assert!(!sql.delete_agent("files", "summarize").await.unwrap());
    /// # });
    /// ```
    pub async fn delete_agent(&self, kit: &str, name: &str) -> Result<bool, SqlError> {
        let name = bare_name(kit, name)?;
        let op = Op::DeleteAgent {
            kit: kit.to_owned(),
            root: false,
            name,
        };
        Ok(self.write(vec![op]).await?.is_some())
    }

    /// Removes the root agent of kit `kit`; returns whether it had one.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let sql = skillkit::Sql::open("sqlite::memory:").unwrap();
    /// assert!(!sql.delete_root_agent("files").await.unwrap());
    /// # });
    /// ```
    pub async fn delete_root_agent(&self, kit: &str) -> Result<bool, SqlError> {
        check_kit(kit)?;
        let op = Op::ReplaceRoot {
            kit: kit.to_owned(),
            keep: String::new(),
        };
        Ok(self.write(vec![op]).await?.is_some())
    }

    /// Replaces kit `kit.name` whole: its skills, root agent and sub-agents
    /// become `kit`'s, in one transaction. Refused, with nothing written, when
    /// any name breaks the naming rule.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{Kit, KitProvider, Skill, Sql};
    /// let sql = Sql::open("sqlite::memory:").unwrap();
    /// sql.put_skill("files", &Skill::new("old", "Gone after the put.")).await.unwrap();
    /// sql.put_kit(&Kit::new("files").with_skill(Skill::new("read", "Read a file."))).await.unwrap();
    /// let kit = sql.get_kit("files").await.unwrap().unwrap();
    /// assert_eq!(kit.skills.len(), 1);
    /// # });
    /// ```
    pub async fn put_kit(&self, kit: &Kit) -> Result<i64, SqlError> {
        let ops = kit_ops(kit)?;
        self.write(ops).await.map(written)
    }

    /// Removes kit `kit` (every skill and agent of it); returns whether it
    /// had any.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let sql = skillkit::Sql::open("sqlite::memory:").unwrap();
    /// sql.put_skill("files", &skillkit::Skill::new("read", "Read a file.")).await.unwrap();
    /// assert!(sql.delete_kit("files").await.unwrap());
    /// # });
    /// ```
    pub async fn delete_kit(&self, kit: &str) -> Result<bool, SqlError> {
        check_kit(kit)?;
        Ok(self.write(clear(kit)).await?.is_some())
    }

    /// Imports the kits of `local` (a kit directory, or a directory of kits
    /// with [`Local::each`]): each replaces the kit of its name, all in one
    /// transaction. Files that fail to parse are skipped, as [`Local`] skips
    /// them; the kits returned are those read from disk, with their
    /// [`diagnostics`](Kit::diagnostics). A name that breaks the naming rule
    /// refuses the whole import.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use skillkit::{KitProvider, Local, Sql};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let kit_dir = dir.path().join("files");
    /// std::fs::create_dir_all(kit_dir.join("skills/read")).unwrap();
    /// std::fs::write(
    ///     kit_dir.join("skills/read/SKILL.md"),
    ///     "---\nname: read\ndescription: Read a file.\n---\nRead $ARGUMENTS.\n",
    /// ).unwrap();
    ///
    /// let sql = Sql::open("sqlite::memory:").unwrap();
    /// let imported = sql.import(&Local::new(&kit_dir)).await.unwrap();
    /// assert_eq!(imported[0].name, "files");
    /// assert_eq!(sql.list_kits().await.unwrap()[0].skills[0].name, "files:read");
    /// # });
    /// ```
    pub async fn import(&self, local: &Local) -> Result<Vec<Kit>, SqlError> {
        let kits = local.list_kits().await.map_err(SqlError::Import)?;
        let mut ops = Vec::new();
        for kit in &kits {
            ops.extend(kit_ops(kit)?);
        }
        self.write(ops).await?;
        Ok(kits)
    }

    /// Runs `ops` in one transaction: bumps the revision, applies them, and
    /// commits when any row changed (returning the new revision), else rolls
    /// back (`None`).
    async fn write(&self, ops: Vec<Op>) -> Result<Option<i64>, SqlError> {
        self.ready().await?;
        // A write whose commit was sent may have happened: never tried again.
        let committing = AtomicBool::new(false);
        let limit = self.inner.timeout;
        let attempt = |pool: Pool| {
            let (ops, committing) = (&ops, &committing);
            async move {
                on_pool!(&pool, p => {
                    let mut tx = step(limit, p.begin()).await?;
                    let revision: i64 =
                        step(limit, sqlx::query_scalar(schema::BUMP).fetch_one(&mut *tx)).await?;
                    let mut changed = 0;
                    for op in ops {
                        let query = match op {
                            Op::PutSkill(row) => sqlx::query(schema::PUT_SKILL)
                                .bind(&row.kit)
                                .bind(&row.name)
                                .bind(&row.description)
                                .bind(&row.body)
                                .bind(&row.license)
                                .bind(&row.compatibility)
                                .bind(&row.allowed_tools)
                                .bind(&row.metadata)
                                .bind(&row.model)
                                .bind(&row.required_scope)
                                .bind(&row.extra),
                            Op::DeleteSkill { kit, name } => sqlx::query(schema::DELETE_SKILL)
                                .bind(kit)
                                .bind(name)
                                .bind(prefixed(kit, name)),
                            Op::PutAgent(row) => sqlx::query(schema::PUT_AGENT)
                                .bind(&row.kit)
                                .bind(row.root)
                                .bind(&row.name)
                                .bind(&row.description)
                                .bind(&row.model)
                                .bind(&row.system_prompt)
                                .bind(&row.tools)
                                .bind(row.max_turns)
                                .bind(row.max_agent_depth)
                                .bind(&row.metadata)
                                .bind(&row.extra),
                            Op::DeleteAgent { kit, root, name } => sqlx::query(schema::DELETE_AGENT)
                                .bind(kit)
                                .bind(*root)
                                .bind(name)
                                .bind(prefixed(kit, name)),
                            Op::ReplaceRoot { kit, keep } => sqlx::query(schema::DELETE_ROOT)
                                .bind(kit)
                                .bind(keep),
                            Op::ClearSkills(kit) => sqlx::query(schema::DELETE_KIT_SKILLS).bind(kit),
                            Op::ClearAgents(kit) => sqlx::query(schema::DELETE_KIT_AGENTS).bind(kit),
                        };
                        // The revision is every statement's last parameter.
                        let done = step(limit, query.bind(revision).execute(&mut *tx)).await?;
                        changed += done.rows_affected();
                    }
                    if changed == 0 {
                        step(limit, tx.rollback()).await?;
                        return Ok(None);
                    }
                    committing.store(true, Ordering::Relaxed);
                    step(limit, tx.commit()).await?;
                    Ok(Some(revision))
                })
            }
        };
        self.run(attempt, || !committing.load(Ordering::Relaxed))
            .await
    }
}

/// The revision of a write that always changes a row.
fn written(revision: Option<i64>) -> i64 {
    revision.unwrap_or_default()
}

/// `name` with kit `kit`'s prefix: rows written by hand may carry it.
fn prefixed(kit: &str, name: &str) -> String {
    format!("{kit}{}{name}", name::SEPARATOR)
}

/// The changes that tombstone every skill and agent of kit `kit`.
fn clear(kit: &str) -> Vec<Op> {
    vec![
        Op::ClearSkills(kit.to_owned()),
        Op::ClearAgents(kit.to_owned()),
    ]
}

/// The changes that make kit `kit` the whole of its name: clear it, then
/// write its rows (rows written again lose their tombstone).
fn kit_ops(kit: &Kit) -> Result<Vec<Op>, SqlError> {
    let name = kit.name.as_ref();
    check_kit(name)?;
    let mut ops = clear(name);
    for skill in &kit.skills {
        ops.push(Op::PutSkill(SkillRow::of(name, skill)?));
    }
    if let Some(agent) = &kit.agent {
        ops.push(Op::PutAgent(AgentRow::of(name, true, agent)?));
    }
    for agent in &kit.agents {
        ops.push(Op::PutAgent(AgentRow::of(name, false, agent)?));
    }
    Ok(ops)
}
