//! `activate_skill`, defined once for the agent and the MCP server: its
//! definition, the lookup of the skill it names, and the text it returns
//! (the rendered body inside `<skill_content>`, with the skill's folder and
//! the files beside it).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::dispatch::files::files_beside;
use crate::dispatch::search_skills::SEARCH_SKILLS;
use crate::skill::Skill;
use crate::tool::ToolDefinition;

/// The name of the tool that activates knowledge skills.
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub const ACTIVATE_SKILL: &str = "activate_skill";

/// The most file names listed beside an activated skill.
const MAX_LISTED_FILES: usize = 100;
/// The skills `activate_skill` reaches in one tool set, and what it says
/// when a call names another.
pub(crate) struct Activatable {
    skills: HashMap<String, Arc<Skill>>,
    /// Skills a person runs but the model may not
    /// (`disable-model-invocation: true`), refused by name.
    people_only: HashSet<String>,
    /// Said after "there is no skill `x`; " when a call names another.
    hint: Hint,
}

/// How a missed name is answered.
pub(crate) enum Hint {
    /// "activate one of: a, b, c" (the skills are listed to the model).
    ListNames,
    /// A fixed text, such as "call list_skills for the names of the skills".
    Text(&'static str),
    /// "did you mean …" with the closest names, then to call `search_skills`
    /// (the skills are too many to list).
    Suggest,
}

impl Activatable {
    /// `skills`, answered with `hint` on a miss.
    pub(crate) fn new(
        skills: impl IntoIterator<Item = Arc<Skill>>,
        people_only: HashSet<String>,
        hint: Hint,
    ) -> Activatable {
        Activatable {
            skills: skills
                .into_iter()
                .map(|skill| (skill.name.to_string(), skill))
                .collect(),
            people_only,
            hint,
        }
    }

    /// The skill of full name `name`, if it is one of these.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skills.get(name)
    }

    /// The skill `activate_skill {name, arguments}` names (an input that
    /// fits [`definition`]'s schema), its body loaded (fetched first when a
    /// server keeps it: [`Body::load`](crate::skill::Body::load)), and the
    /// arguments; `Err` with what to do when there is no such skill or its
    /// body cannot be had. The caller renders the body, after running its
    /// `` !`command` ``s if at all, so that nothing the arguments hold is
    /// ever taken for a command.
    pub(crate) async fn load<'i>(
        &self,
        input: &'i Value,
    ) -> Result<(&Arc<Skill>, &'i str), String> {
        let name = input.get("name").and_then(Value::as_str).unwrap_or("");
        let arguments = input.get("arguments").and_then(Value::as_str).unwrap_or("");
        let skill = self.find(name)?;
        skill.body.load().await.map_err(|e| e.to_string())?;
        Ok((skill, arguments))
    }

    /// The skill of full name `name`, if it is one of these; `Err` with what
    /// to do when it is not (also for `run_skill_script`).
    pub(crate) fn find(&self, name: &str) -> Result<&Arc<Skill>, String> {
        let Some(skill) = self.skills.get(name) else {
            if self.people_only.contains(name) {
                return Err(format!(
                    "`{name}` is run by people only (its frontmatter says \
                     `disable-model-invocation: true`), so it cannot be activated here; go on \
                     without it, or tell the user they can run it themselves"
                ));
            }
            return Err(match &self.hint {
                Hint::ListNames => {
                    let mut known: Vec<&str> = self.skills.keys().map(String::as_str).collect();
                    known.sort_unstable();
                    format!(
                        "there is no skill `{name}`; activate one of: {}",
                        known.join(", ")
                    )
                }
                Hint::Text(text) => format!("there is no skill `{name}`; {text}"),
                Hint::Suggest => {
                    let closest = closest(name, self.skills.keys().map(String::as_str));
                    let search = format!(
                        "call `{SEARCH_SKILLS}` with a few words about the task to find the \
                         skill that fits"
                    );
                    match closest.as_slice() {
                        [] => format!("there is no skill `{name}`; {search}"),
                        names => format!(
                            "there is no skill `{name}`; did you mean `{}`? If not, {search}",
                            names.join("`, `")
                        ),
                    }
                }
            });
        };
        Ok(skill)
    }
}

/// The names among `names` closest to `name` (at most three, closest
/// first): those within a few edits of it, as a whole or by their bare
/// part (`pdf` for `files:pdf`), ignoring case.
fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let wanted: Vec<char> = name.to_lowercase().chars().collect();
    let bare_wanted: Vec<char> = match name.rsplit_once(':') {
        Some((_, bare)) => bare.to_lowercase().chars().collect(),
        None => wanted.clone(),
    };
    let most = (wanted.len() / 3).max(2);
    let mut found: Vec<(usize, &str)> = names
        .filter_map(|candidate| {
            let lower: Vec<char> = candidate.to_lowercase().chars().collect();
            let bare_at = lower.iter().rposition(|&c| c == ':').map_or(0, |at| at + 1);
            let distance =
                edits(&wanted, &lower, most).min(edits(&bare_wanted, &lower[bare_at..], most));
            (distance <= most).then_some((distance, candidate))
        })
        .collect();
    found.sort_unstable();
    found.truncate(3);
    found.into_iter().map(|(_, name)| name).collect()
}

/// The edit distance (Levenshtein) of `a` and `b`; `most + 1` as soon as it
/// is known to be larger than `most`.
fn edits(a: &[char], b: &[char], most: usize) -> usize {
    if a.len().abs_diff(b.len()) > most {
        return most + 1;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().all(|&d| d > most) {
            return most + 1;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The definition of `activate_skill`. With `names`, the model may name only
/// those (they are all listed to it); without, any skill's full name.
pub(crate) fn definition(names: Option<Vec<&str>>) -> ToolDefinition {
    let mut name = json!({"type": "string", "description": "The skill's full name."});
    if let Some(names) = names {
        name["enum"] = json!(names);
    }
    ToolDefinition::new(
        ACTIVATE_SKILL,
        "Load the full instructions of a skill when a task matches its description: its \
         instructions with the arguments filled in, its folder, and the names of the files \
         beside it.",
        json!({
            "type": "object",
            "properties": {
                "name": name,
                "arguments": {"type": "string", "description": "Arguments for the skill, as text."}
            },
            "required": ["name"]
        }),
    )
}

/// What `activate_skill` returns for `skill` whose body rendered is `body`:
/// the body inside `<skill_content name="…">`, with the skill's directory and
/// the names of the files beside its `SKILL.md` (read later, if at all).
pub(crate) fn skill_content(skill: &Skill, body: &str) -> String {
    let mut out = format!("<skill_content name=\"{}\">\n", skill.name);
    out.push_str(body.trim_end());
    out.push('\n');
    if let Some(dir) = skill.dir() {
        let _ = write!(out, "\nSkill directory: {}\n", dir.display());
        let beside = files_beside(dir);
        if !beside.files.is_empty() {
            let _ = writeln!(
                out,
                "Files in it (paths relative to the skill directory; read one only when the \
                 instructions need it):"
            );
            for file in beside.files.iter().take(MAX_LISTED_FILES) {
                let _ = writeln!(out, "- {file}");
            }
            let more = beside.files.len().saturating_sub(MAX_LISTED_FILES);
            match (more, beside.whole) {
                (0, true) => {}
                (0, false) => {
                    let _ = writeln!(out, "- … and more, not listed");
                }
                (more, true) => {
                    let _ = writeln!(out, "- … and {more} more, not listed");
                }
                (more, false) => {
                    let _ = writeln!(out, "- … and {more} more and others, not listed");
                }
            }
        }
    }
    out.push_str("</skill_content>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_are_found_whole_or_by_their_bare_part() {
        let names = ["files:read", "files:write", "pdf:reader", "notes:todo"];
        let iter = || names.iter().copied();
        assert_eq!(closest("files:raed", iter())[0], "files:read");
        // A bare name, or one under another kit, is matched by the bare part.
        assert_eq!(closest("reader", iter())[0], "pdf:reader");
        assert_eq!(closest("docs:todo", iter()), ["notes:todo"]);
        assert_eq!(closest("FILES:READ", iter())[0], "files:read");
        assert!(closest("something-else-entirely", iter()).is_empty());
    }

    #[test]
    fn edits_counts_insertions_deletions_and_substitutions() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edits(&chars("kitten"), &chars("sitting"), 5), 3);
        assert_eq!(edits(&chars(""), &chars("abc"), 5), 3);
        // Past `most`, the answer is `most + 1`.
        assert_eq!(edits(&chars("abcdef"), &chars("uvwxyz"), 2), 3);
    }
}
