//! Template tokens in a skill body, substituted when the skill is activated:
//! SkillKit's (`$ARGUMENTS`, `$N`, `$SKILL_DIR`, `$SESSION_ID`) and Claude
//! Code's (`${CLAUDE_SKILL_DIR}`, `${CLAUDE_SESSION_ID}`), one token per value;
//! and [`Skill::render`] and [`Skill::activate`], which make a body the text
//! a model reads.

use std::borrow::Cow;
use std::ops::Range;

use super::{BodyError, Skill};

/// Skill arguments: the text as given, and its words split like a shell does
/// (single and double quotes group words; an unclosed quote runs to the end).
///
/// ```
/// let args = skillkit::skill::Arguments::parse(r#"one "two words" 'three'"#);
/// assert_eq!(args.words(), ["one", "two words", "three"]);
/// assert_eq!(args.raw(), r#"one "two words" 'three'"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arguments {
    raw: String,
    words: Vec<String>,
}

impl Arguments {
    /// Parses argument text.
    ///
    /// ```
    /// assert!(skillkit::skill::Arguments::parse("  ").is_empty());
    /// ```
    pub fn parse(text: &str) -> Self {
        let raw = text.trim().to_owned();
        let mut words = Vec::new();
        let mut word = String::new();
        let mut in_word = false;
        let mut quote: Option<char> = None;
        for c in raw.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '"' | '\'') => {
                    quote = Some(c);
                    in_word = true;
                }
                (None, c) if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                (None, c) => {
                    word.push(c);
                    in_word = true;
                }
            }
        }
        if in_word {
            words.push(word);
        }
        Arguments { raw, words }
    }

    /// The arguments as given (trimmed).
    ///
    /// ```
    /// assert_eq!(skillkit::skill::Arguments::parse(" a b ").raw(), "a b");
    /// ```
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The words.
    ///
    /// ```
    /// assert_eq!(skillkit::skill::Arguments::parse("a b").words(), ["a", "b"]);
    /// ```
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Whether no arguments were given.
    ///
    /// ```
    /// assert!(skillkit::skill::Arguments::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A template token, found at the start of the text after a `$`.
#[derive(Clone, Copy)]
enum Token {
    All,
    Index(usize),
    SkillDir,
    SessionId,
}

/// The token at the start of `rest` (the text after a `$`), with its length.
fn token(rest: &str) -> Option<(Token, usize)> {
    let bytes = rest.as_bytes();
    let word = |name: &str| {
        rest.starts_with(name) && !bytes.get(name.len()).copied().is_some_and(is_word_char)
    };
    if let Some(after) = rest.strip_prefix("ARGUMENTS[") {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after.as_bytes().get(digits) == Some(&b']') {
            let index = after[..digits].parse().ok()?;
            return Some((Token::Index(index), "ARGUMENTS[".len() + digits + 1));
        }
    }
    if word("ARGUMENTS") {
        return Some((Token::All, "ARGUMENTS".len()));
    }
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 {
        let index = rest[..digits].parse().ok()?;
        return Some((Token::Index(index), digits));
    }
    let braced = |name: &str| {
        rest.strip_prefix('{')
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|r| r.starts_with('}'))
    };
    for (name, token) in [
        ("SKILL_DIR", Token::SkillDir),
        ("SESSION_ID", Token::SessionId),
    ] {
        if word(name) {
            return Some((token, name.len()));
        }
        if braced(name) {
            return Some((token, name.len() + 2));
        }
    }
    // Claude Code's names for the same values, which it documents (and
    // substitutes) only in braces.
    for (name, token) in [
        ("CLAUDE_SKILL_DIR", Token::SkillDir),
        ("CLAUDE_SESSION_ID", Token::SessionId),
    ] {
        if braced(name) {
            return Some((token, name.len() + 2));
        }
    }
    None
}

/// A piece of a body to render: template text, whose tokens are
/// substituted, or inert text (what a `` !`command` `` printed), inserted as
/// it is and never scanned for tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Text the skill's author wrote: its tokens are substituted.
    Template(&'a str),
    /// Text from elsewhere: inserted unchanged.
    Inert(&'a str),
}

/// `body` cut into its template text and `outputs` (the spans of its
/// `` !`command` `` lines, in order, with what each printed), which take
/// those spans' places as inert text.
pub(crate) fn pieces<'a>(body: &'a str, outputs: &'a [(Range<usize>, String)]) -> Vec<Piece<'a>> {
    let mut pieces = Vec::with_capacity(outputs.len() * 2 + 1);
    let mut last = 0;
    for (span, output) in outputs {
        pieces.push(Piece::Template(&body[last..span.start]));
        pieces.push(Piece::Inert(output));
        last = span.end;
    }
    pieces.push(Piece::Template(&body[last..]));
    pieces
}

pub(super) fn render(
    pieces: &[Piece<'_>],
    dir: Option<&std::path::Path>,
    arguments: &Arguments,
    session_id: Option<&str>,
) -> String {
    let dir = dir.map(|d| d.display().to_string());
    let size: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Template(t) | Piece::Inert(t) => t.len(),
        })
        .sum();
    let mut out = String::with_capacity(size + arguments.raw().len());
    let mut used_arguments = false;
    for piece in pieces {
        let mut rest = match piece {
            Piece::Inert(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Template(text) => *text,
        };
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let replacement = token(after).and_then(|(token, len)| {
                let text = match token {
                    Token::All => {
                        used_arguments = true;
                        Some(arguments.raw())
                    }
                    Token::Index(i) => arguments.words().get(i).map(|w| {
                        used_arguments = true;
                        w.as_str()
                    }),
                    Token::SkillDir => dir.as_deref(),
                    Token::SessionId => session_id,
                };
                text.map(|t| (t, len))
            });
            match replacement {
                Some((text, len)) => {
                    out.push_str(text);
                    rest = &after[len..];
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }
    if !used_arguments && !arguments.is_empty() {
        if !out.is_empty() {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str("ARGUMENTS: ");
        out.push_str(arguments.raw());
    }
    out
}

impl Skill {
    /// The body with its template tokens substituted, as handed to a model when
    /// the skill is activated:
    ///
    /// * `$ARGUMENTS`: all arguments, as given;
    /// * `$ARGUMENTS[N]` and `$N`: argument `N` (0-based), only when it exists, so
    ///   `$5` in prose stays `$5` when fewer than six arguments were given;
    /// * `$SKILL_DIR` / `${SKILL_DIR}` / `${CLAUDE_SKILL_DIR}`: the skill's
    ///   directory, when it has one;
    /// * `$SESSION_ID` / `${SESSION_ID}` / `${CLAUDE_SESSION_ID}`: the session
    ///   id, when given.
    ///
    /// Claude Code's `CLAUDE_` forms are substituted only with their braces, as
    /// Claude Code documents them (`$CLAUDE_SKILL_DIR` stays as written).
    ///
    /// Arguments are split like a shell does (quotes group words). When the body
    /// has no argument token and arguments were given, they are appended as
    /// `ARGUMENTS: …`. Nothing in the body is ever executed.
    ///
    /// A body that lives in its file is read now ([`Body::read`](super::Body::read)); that is
    /// the only way this call fails.
    ///
    /// ```
    /// let skill = skillkit::Skill::new("a:b", "d").with_body("Copy $0 to $1; it costs $5.");
    /// assert_eq!(skill.render("'my file' backup", None)?, "Copy my file to backup; it costs $5.");
    /// let plain = skillkit::Skill::new("a:c", "d").with_body("Summarise.");
    /// assert_eq!(plain.render("the report", None)?, "Summarise.\n\nARGUMENTS: the report");
    /// # Ok::<(), skillkit::skill::BodyError>(())
    /// ```
    pub fn render(&self, arguments: &str, session_id: Option<&str>) -> Result<String, BodyError> {
        let body = self.body.read()?;
        Ok(self.render_pieces(&[Piece::Template(&body)], arguments, session_id))
    }

    /// `pieces` of this skill's body (read already) rendered as
    /// [`render`](Self::render) renders a body: tokens substituted in the
    /// [`Piece::Template`]s only, [`Piece::Inert`] text (what a
    /// `` !`command` `` printed) inserted as it is.
    fn render_pieces(
        &self,
        pieces: &[Piece<'_>],
        arguments: &str,
        session_id: Option<&str>,
    ) -> String {
        render(pieces, self.dir(), &Arguments::parse(arguments), session_id)
    }

    /// The skill activated: its body loaded (fetched first when a server
    /// keeps it, [`Body::load`](super::Body::load)), read, and [rendered](Self::render) with
    /// `arguments`. The one way a skill becomes the text a model reads
    /// (`activate_skill`), an MCP client's prompt, and what a person invoking
    /// it sends (`skillkit run --skill`, chat's `/name`). Its
    /// `` !`command` `` lines stay as written: the tool path runs them where
    /// scripts are enabled.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let skill = skillkit::Skill::new("a:b", "d").with_body("Review $ARGUMENTS.");
    /// assert_eq!(skill.activate("main.rs", None).await.unwrap(), "Review main.rs.");
    /// # });
    /// ```
    pub async fn activate(
        &self,
        arguments: &str,
        session_id: Option<&str>,
    ) -> Result<String, BodyError> {
        let written = self.written_body().await?;
        Ok(self.render_written(&written, &[], arguments, session_id))
    }

    /// The body to activate: loaded (fetched first when a server keeps it)
    /// and read; the first half of [`activate`](Self::activate).
    pub(crate) async fn written_body(&self) -> Result<Cow<'_, str>, BodyError> {
        self.body.load().await?;
        self.body.read()
    }

    /// `written` (from [`written_body`](Self::written_body)) rendered with
    /// `arguments`, `outputs` (the spans of its `` !`command` `` lines with
    /// what each printed) put in as inert text; the second half of
    /// [`activate`](Self::activate).
    pub(crate) fn render_written(
        &self,
        written: &str,
        outputs: &[(std::ops::Range<usize>, String)],
        arguments: &str,
        session_id: Option<&str>,
    ) -> String {
        self.render_pieces(&pieces(written, outputs), arguments, session_id)
    }
}

#[cfg(test)]
mod tests {
    use crate::Skill;

    fn render(body: &'static str, args: &str) -> String {
        Skill::new("k:s", "d")
            .with_body(body)
            .render(args, Some("sess-1"))
            .unwrap()
    }

    #[test]
    fn dollar_five_in_prose_survives_with_fewer_arguments() {
        assert_eq!(render("It costs $5 for $0.", "a b c"), "It costs $5 for a.");
        assert_eq!(render("It costs $5.", ""), "It costs $5.");
    }

    #[test]
    fn indexed_arguments_exist_only_when_given() {
        assert_eq!(
            render("$ARGUMENTS[1]/$ARGUMENTS[2]", "x y"),
            "y/$ARGUMENTS[2]"
        );
        assert_eq!(render("$10", "0 1 2 3 4 5 6 7 8 9 ten"), "ten");
    }

    #[test]
    fn all_arguments_and_word_boundaries() {
        assert_eq!(render("Do: $ARGUMENTS.", "a  b"), "Do: a  b.");
        assert_eq!(render("$ARGUMENTSX", ""), "$ARGUMENTSX");
    }

    #[test]
    fn session_and_dir() {
        assert_eq!(render("${SESSION_ID} $SESSION_ID", ""), "sess-1 sess-1");
        let skill = Skill::new("k:s", "d").with_body("$SKILL_DIR/${SKILL_DIR}/x");
        assert_eq!(skill.render("", None).unwrap(), "$SKILL_DIR/${SKILL_DIR}/x");
        let skill = skill.with_location("/k/s/SKILL.md");
        assert_eq!(skill.render("", None).unwrap(), "/k/s//k/s/x");
    }

    #[test]
    fn claude_code_tokens_are_the_same_tokens() {
        let body = "${CLAUDE_SKILL_DIR}/scripts/run.py ${CLAUDE_SESSION_ID}.log";
        let skill = Skill::new("k:s", "d")
            .with_body(body)
            .with_location("/k/s/SKILL.md");
        assert_eq!(
            skill.render("", Some("sess-1")).unwrap(),
            "/k/s/scripts/run.py sess-1.log"
        );
        // Without a directory or a session they stay, as `${SKILL_DIR}` does.
        let bare = Skill::new("k:s", "d").with_body(body);
        assert_eq!(bare.render("", None).unwrap(), body);
    }

    #[test]
    fn claude_code_tokens_need_their_braces() {
        // Claude Code documents only the braced forms; `$CLAUDE_SKILL_DIR`
        // is a shell variable's text, left for the shell.
        let skill = Skill::new("k:s", "d")
            .with_body(
                "$CLAUDE_SKILL_DIR $CLAUDE_SESSION_ID ${CLAUDE_SKILL_DIRS} ${CLAUDE_SESSION_ID",
            )
            .with_location("/k/s/SKILL.md");
        assert_eq!(
            skill.render("", Some("sess-1")).unwrap(),
            "$CLAUDE_SKILL_DIR $CLAUDE_SESSION_ID ${CLAUDE_SKILL_DIRS} ${CLAUDE_SESSION_ID"
        );
    }

    #[test]
    fn arguments_are_appended_when_no_token_used() {
        assert_eq!(render("Body\n", "go"), "Body\n\nARGUMENTS: go");
        assert_eq!(render("", "go"), "ARGUMENTS: go");
        assert_eq!(render("Price $5", "go"), "Price $5\n\nARGUMENTS: go");
    }

    #[test]
    fn shell_commands_are_left_alone() {
        assert_eq!(render("!`rm -rf /` $(whoami)", ""), "!`rm -rf /` $(whoami)");
    }

    #[test]
    fn trailing_dollar_and_unicode() {
        assert_eq!(render("é$", ""), "é$");
        assert_eq!(render("$é $0", "ü"), "$é ü");
    }
}
