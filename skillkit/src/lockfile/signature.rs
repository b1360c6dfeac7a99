//! Signed skills: a skill's author signs its files with an SSH key, in the
//! `sshsig` format `git` and `ssh-keygen -Y sign` use, and the signature
//! travels with the skill as the file `SKILL.sig` in its folder.
//!
//! # What is signed
//!
//! The message is the skill's aggregate digest ([`aggregate_digest`],
//! `sha256:<64 hex>`, as text) over every file of its folder except
//! `SKILL.sig` itself, in the namespace `skillkit-skill`. So the same
//! signature is made by `skillkit sign` or by
//! `printf %s "$(skillkit sign --print-message DIR)" | ssh-keygen -Y sign -f KEY -n skillkit-skill`
//! (an encrypted key, a key in ssh-agent or on a security token).
//!
//! A lock pins the signer (`signer`: the public key in OpenSSH form, no
//! comment). [`verify`](super::verify) then checks offline that the
//! signature holds for the pinned bytes and was made by that key; an
//! allowed-signers file (`ssh-keygen`'s format, as `git` uses it) names
//! the keys accepted for skills whose lock pins none.
//!
//! Keys: Ed25519 and ECDSA P-256 (RSA is not compiled in).
//!
//! [`aggregate_digest`]: super::aggregate_digest

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::LockError;
use super::walk::Read;

/// The signature's file name, in the skill's folder.
pub const SIGNATURE_FILE: &str = "SKILL.sig";

/// The `sshsig` namespace of a skill's signature (`ssh-keygen -n`).
pub const SIGNATURE_NAMESPACE: &str = "skillkit-skill";

/// The most bytes of a signature file read.
const MAX_SIGNATURE_BYTES: u64 = 64 * 1024;

/// The keys an allowed-signers file accepts (the format of `ssh-keygen
/// -Y verify -f`: `principals [options] keytype key [comment]` a line; a
/// `namespaces="…"` option that leaves out `skillkit-skill` excludes the
/// key; certificate authorities are not supported and skipped).
///
/// ```
/// use skillkit::lockfile::AllowedSigners;
/// let allowed = AllowedSigners::parse(
///     "# team keys\nalice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJdD7y3aLq454yWBdwLWbieU1ebz9/cu7/QEXn9OIeZJ alice\n",
/// );
/// assert_eq!(allowed.len(), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    /// (principals, key).
    keys: Vec<(String, PublicKey)>,
}

impl AllowedSigners {
    /// The keys of an allowed-signers file's text; lines that cannot be
    /// read are skipped.
    ///
    /// ```
    /// let allowed = skillkit::lockfile::AllowedSigners::parse("not a key\n");
    /// assert!(allowed.is_empty());
    /// ```
    pub fn parse(text: &str) -> AllowedSigners {
        let mut keys = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((principals, rest)) = line.split_once(char::is_whitespace) else {
                continue;
            };
            let (options, key) = split_options(rest.trim_start());
            if options
                .iter()
                .any(|o| o.eq_ignore_ascii_case("cert-authority"))
            {
                continue;
            }
            let namespaces = options.iter().find_map(|o| {
                let (name, value) = o.split_once('=')?;
                name.eq_ignore_ascii_case("namespaces")
                    .then(|| value.trim_matches('"').to_owned())
            });
            if let Some(namespaces) = namespaces
                && !namespaces
                    .split(',')
                    .any(|n| n.trim() == SIGNATURE_NAMESPACE)
            {
                continue;
            }
            if let Ok(key) = PublicKey::from_openssh(key) {
                keys.push((principals.to_owned(), key));
            }
        }
        AllowedSigners { keys }
    }

    /// Reads an allowed-signers file.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("allowed_signers");
    /// std::fs::write(&path, "").unwrap();
    /// assert!(skillkit::lockfile::AllowedSigners::read(&path).unwrap().is_empty());
    /// ```
    pub fn read(path: &Path) -> Result<AllowedSigners, LockError> {
        let text = std::fs::read_to_string(path).map_err(|source| LockError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(AllowedSigners::parse(&text))
    }

    /// The number of keys accepted.
    ///
    /// ```
    /// assert_eq!(skillkit::lockfile::AllowedSigners::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is accepted.
    ///
    /// ```
    /// assert!(skillkit::lockfile::AllowedSigners::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The principals of `signer` (a key in OpenSSH form), if accepted.
    ///
    /// ```
    /// let allowed = skillkit::lockfile::AllowedSigners::default();
    /// assert_eq!(allowed.principals("ssh-ed25519 AAAA"), None);
    /// ```
    pub fn principals(&self, signer: &str) -> Option<&str> {
        let signer = PublicKey::from_openssh(signer).ok()?;
        self.keys
            .iter()
            .find(|(_, key)| key.key_data() == signer.key_data())
            .map(|(principals, _)| principals.as_str())
    }
}

/// The options before the key on an allowed-signers line (quoted values
/// may hold spaces and commas), and the key with what follows it.
fn split_options(rest: &str) -> (Vec<String>, &str) {
    let looks_like_key =
        |s: &str| s.starts_with("ssh-") || s.starts_with("ecdsa-") || s.starts_with("sk-");
    if looks_like_key(rest) {
        return (Vec::new(), rest);
    }
    let mut quoted = false;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut options = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in rest[..end].chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => options.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    options.push(current);
    (options, rest[end..].trim_start())
}

/// The message a signature of the skill in `folder` signs: the aggregate
/// digest of its files, `SKILL.sig` left out.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("SKILL.md"), "x").unwrap();
/// std::fs::write(dir.path().join("SKILL.sig"), "ignored").unwrap();
/// assert_eq!(
///     skillkit::lockfile::signed_message(dir.path()).unwrap(),
///     skillkit::lockfile::aggregate_digest(&[("SKILL.md", b"x".as_slice())]),
/// );
/// ```
pub fn signed_message(folder: &Path) -> Result<String, LockError> {
    let walked = super::walk(folder);
    if let Some(entry) = walked.odd.first() {
        return Err(LockError::Refused(format!(
            "{}: `{entry}` is a symbolic link, not a regular file, or unreadable",
            folder.display()
        )));
    }
    Ok(message_of(&walked.files))
}

/// The signed message of files already digested.
pub(super) fn message_of(files: &BTreeMap<String, Read>) -> String {
    let framed: Vec<(&str, u64, [u8; 32])> = files
        .iter()
        .filter(|(path, _)| path.as_str() != SIGNATURE_FILE)
        .map(|(path, read)| (path.as_str(), read.size, read.sha256))
        .collect();
    crate::whole::aggregate(&framed)
}

/// Signs the skill in `folder` with `key` (an unencrypted OpenSSH private
/// key): writes its `SKILL.sig`, whole, and returns the signer (the public
/// key in OpenSSH form), as a lock pins it.
///
/// ```
/// use skillkit::lockfile::ssh_key::{PrivateKey, private::Ed25519Keypair};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\ndescription: X.\n---\n").unwrap();
/// let key = PrivateKey::from(Ed25519Keypair::from_seed(&[7; 32]));
/// let signer = skillkit::lockfile::sign(dir.path(), &key).unwrap();
/// assert_eq!(skillkit::lockfile::signature_of(dir.path()).unwrap(), Some(signer));
/// ```
pub fn sign(folder: &Path, key: &PrivateKey) -> Result<String, LockError> {
    if key.is_encrypted() {
        return Err(LockError::Refused(
            "the key is encrypted; sign the message of `skillkit sign --print-message` with \
             `ssh-keygen -Y sign -n skillkit-skill` instead"
                .into(),
        ));
    }
    let message = signed_message(folder)?;
    let refused = |e: ssh_key::Error| LockError::Refused(format!("cannot sign: {e}"));
    let signature = key
        .sign(SIGNATURE_NAMESPACE, HashAlg::Sha512, message.as_bytes())
        .map_err(refused)?;
    let pem = signature.to_pem(LineEnding::LF).map_err(refused)?;
    let path = folder.join(SIGNATURE_FILE);
    crate::whole::write(&path, pem.as_bytes()).map_err(|source| LockError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(signer_of(key.public_key()))
}

/// The signer of the skill in `folder`: `None` when it has no `SKILL.sig`,
/// the key that made it when the signature holds for the folder's files,
/// an error saying why when it does not.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("SKILL.md"), "x").unwrap();
/// assert_eq!(skillkit::lockfile::signature_of(dir.path()).unwrap(), None);
/// std::fs::write(dir.path().join("SKILL.sig"), "garbage").unwrap();
/// assert!(skillkit::lockfile::signature_of(dir.path()).is_err());
/// ```
pub fn signature_of(folder: &Path) -> Result<Option<String>, LockError> {
    let walked = super::walk(folder);
    if !walked.files.contains_key(SIGNATURE_FILE) {
        return Ok(None);
    }
    check(folder, &walked.files)
        .map(Some)
        .map_err(LockError::BadSignature)
}

/// The signer of `SKILL.sig` in `folder` if it holds for `files` (the
/// folder's files, digested), else why not.
pub(super) fn check(folder: &Path, files: &BTreeMap<String, Read>) -> Result<String, String> {
    let mut pem = Vec::new();
    let read = skillkit_parser::open_file(&folder.join(SIGNATURE_FILE))
        .and_then(|(file, _)| file.take(MAX_SIGNATURE_BYTES).read_to_end(&mut pem));
    if let Err(e) = read {
        return Err(format!("{SIGNATURE_FILE} cannot be read: {e}"));
    }
    let signature = SshSig::from_pem(&pem)
        .map_err(|e| format!("{SIGNATURE_FILE} is not an SSH signature: {e}"))?;
    if signature.namespace() != SIGNATURE_NAMESPACE {
        return Err(format!(
            "{SIGNATURE_FILE} is for another use (namespace {:?}, not `{SIGNATURE_NAMESPACE}`)",
            signature.namespace()
        ));
    }
    let key = PublicKey::from(signature.public_key().clone());
    key.verify(
        SIGNATURE_NAMESPACE,
        message_of(files).as_bytes(),
        &signature,
    )
    .map_err(|_| format!("{SIGNATURE_FILE} does not sign these files"))?;
    Ok(signer_of(&key))
}

/// A public key as a lock pins it: OpenSSH form, no comment.
fn signer_of(key: &PublicKey) -> String {
    PublicKey::from(key.key_data().clone())
        .to_openssh()
        .unwrap_or_default()
}

/// `signer` in the form a lock pins (so two spellings of one key, one
/// with a comment, compare equal), or `None` when it is not a key.
///
/// ```
/// assert_eq!(skillkit::lockfile::normal_signer("nonsense"), None);
/// ```
pub fn normal_signer(signer: &str) -> Option<String> {
    PublicKey::from_openssh(signer.trim())
        .ok()
        .map(|k| signer_of(&k))
}
