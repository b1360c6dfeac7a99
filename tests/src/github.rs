//! Shared by the `github_*` tests: a small GitHub look-alike on 127.0.0.1 and
//! tarballs built in GitHub's layout.
//!
//! The server answers `GET /repos/{o}/{r}/commits/{ref}` (the `sha` media type)
//! and `GET /repos/{o}/{r}/tarball/{sha}` with a 302 to
//! `/codeload/{o}/{r}/legacy.tar.gz/{sha}` on itself, counts requests, and
//! misbehaves on demand.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use flate2::Compression;
use flate2::write::GzEncoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Barrier, Notify};
use tokio::task::JoinHandle;

/// The corpus copied into the repository (found from the `tests` crate and
/// from the CLI's tests, which include this module too).
pub const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/corpus/obra__superpowers"
);

/// A SHA for tests.
pub fn sha(n: u8) -> String {
    format!("{n:02x}").repeat(20)
}

/// Which request a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Commits,
    Tarball,
}

/// How the server misbehaves.
#[derive(Debug, Clone)]
pub enum Fault {
    NotFound,
    /// 403 with `x-ratelimit-remaining: 0` and this reset (Unix seconds).
    RateLimited(u64),
    Unauthorized,
    Forbidden,
    ServerError,
    /// Announce the whole body, send half of it, close the connection.
    DropMidBody,
    /// Announce the whole body, send half of it, then wait until the client
    /// closes the connection.
    StallMidBody,
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub authorization: Option<String>,
    pub accept: Option<String>,
}

#[derive(Default)]
struct State {
    /// (`owner/repo`, ref) → SHA.
    refs: HashMap<(String, String), String>,
    /// SHA → tarball.
    tarballs: HashMap<String, Vec<u8>>,
    fault: Option<(Endpoint, Fault)>,
    /// When set, the fault heals after hitting this many more requests.
    fault_left: Option<usize>,
    /// When set, archive answers wait until this many are waiting.
    gate: Option<Arc<Barrier>>,
    /// When set, archives are redirected to this server (another host).
    archive_host: Option<String>,
    requests: Vec<Request>,
    /// Told when a client closed a stalled download.
    stall_closed: Arc<Notify>,
}

/// The fake GitHub.
pub struct Server {
    url: String,
    state: Arc<Mutex<State>>,
    accept: JoinHandle<()>,
}

impl Server {
    pub async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&shared)));
            }
        });
        Server { url, state, accept }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves `tarball` as the archive of `repo` at `git_ref` (`HEAD` for the
    /// default branch) with commit `sha`.
    pub fn publish(&self, repo: &str, git_ref: &str, sha: &str, tarball: Vec<u8>) {
        let mut state = self.state.lock().unwrap();
        state
            .refs
            .insert((repo.to_lowercase(), git_ref.to_owned()), sha.to_owned());
        state.tarballs.insert(sha.to_owned(), tarball);
    }

    pub fn fail(&self, endpoint: Endpoint, fault: Fault) {
        self.state.lock().unwrap().fault = Some((endpoint, fault));
    }

    /// Like [`fail`](Server::fail), for the next `times` requests to
    /// `endpoint` only.
    pub fn fail_times(&self, endpoint: Endpoint, fault: Fault, times: usize) {
        let mut state = self.state.lock().unwrap();
        state.fault = Some((endpoint, fault));
        state.fault_left = Some(times);
    }

    /// Redirects archive downloads to `other` (a different origin).
    pub fn redirect_archives_to(&self, other: &Server) {
        self.state.lock().unwrap().archive_host = Some(other.url.clone());
    }

    /// Waits until a client closed a download stalled by
    /// [`Fault::StallMidBody`].
    pub async fn stalled_download_closed(&self) {
        let closed = Arc::clone(&self.state.lock().unwrap().stall_closed);
        closed.notified().await;
    }

    pub fn heal(&self) {
        let mut state = self.state.lock().unwrap();
        state.fault = None;
        state.fault_left = None;
    }

    /// Archive answers wait until `n` archive requests are waiting.
    pub fn gate_archives(&self, n: usize) {
        self.state.lock().unwrap().gate = Some(Arc::new(Barrier::new(n)));
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// How many requests had a path starting with `prefix`.
    pub fn count(&self, prefix: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.path.starts_with(prefix))
            .count()
    }

    /// How many archive downloads were asked for (the 302 step).
    pub fn tarball_requests(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.path.contains("/tarball/"))
            .count()
    }

    /// Stops accepting connections: the network is down from now on.
    pub fn stop(&self) {
        self.accept.abort();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("")
        .to_owned();
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let request = Request {
        path: path.clone(),
        authorization: header("authorization"),
        accept: header("accept"),
    };
    let (answer, gate) = {
        let mut state = state.lock().unwrap();
        state.requests.push(request.clone());
        let gate = path
            .starts_with("/codeload/")
            .then(|| state.gate.clone())
            .flatten();
        let answer = route(&state, &request);
        wear_fault(&mut state, &request);
        (answer, gate)
    };
    if let Some(gate) = gate {
        gate.wait().await;
    }
    let _ = answer.send(&mut stream).await;
}

enum Answer {
    Plain {
        status: &'static str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    DropMidBody(Vec<u8>),
    StallMidBody(Vec<u8>, Arc<Notify>),
}

impl Answer {
    fn status(status: &'static str) -> Answer {
        Answer::Plain {
            status,
            headers: Vec::new(),
            body: format!("{{\"message\":\"{status}\"}}").into_bytes(),
        }
    }

    async fn send(self, stream: &mut TcpStream) -> std::io::Result<()> {
        match self {
            Answer::Plain {
                status,
                headers,
                body,
            } => {
                let mut text = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    text.push_str(&format!("{name}: {value}\r\n"));
                }
                text.push_str("\r\n");
                stream.write_all(text.as_bytes()).await?;
                stream.write_all(&body).await?;
            }
            Answer::DropMidBody(body) => {
                let text = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/x-gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(text.as_bytes()).await?;
                stream.write_all(&body[..body.len() / 2]).await?;
            }
            Answer::StallMidBody(body, closed) => {
                let text = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/x-gzip\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                stream.write_all(text.as_bytes()).await?;
                stream.write_all(&body[..body.len() / 2]).await?;
                stream.flush().await?;
                let mut buf = [0u8; 256];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                }
                closed.notify_one();
                return Ok(());
            }
        }
        stream.flush().await?;
        stream.shutdown().await
    }
}

fn endpoint_of(request: &Request) -> Endpoint {
    match request.path.trim_start_matches('/').split('/').nth(3) {
        Some("commits") => Endpoint::Commits,
        _ => Endpoint::Tarball,
    }
}

/// Counts a request against a fault given for a number of requests.
fn wear_fault(state: &mut State, request: &Request) {
    let hit = state
        .fault
        .as_ref()
        .is_some_and(|(on, _)| *on == endpoint_of(request));
    if let (true, Some(left)) = (hit, state.fault_left.as_mut()) {
        *left = left.saturating_sub(1);
        if *left == 0 {
            state.fault = None;
            state.fault_left = None;
        }
    }
}

fn route(state: &State, request: &Request) -> Answer {
    let parts: Vec<&str> = request.path.trim_start_matches('/').split('/').collect();
    let endpoint = match parts.as_slice() {
        ["repos", _, _, "commits", ..] => Endpoint::Commits,
        _ => Endpoint::Tarball,
    };
    if let Some((on, fault)) = &state.fault
        && *on == endpoint
    {
        match fault {
            Fault::NotFound => return Answer::status("404 Not Found"),
            Fault::Unauthorized => return Answer::status("401 Unauthorized"),
            Fault::Forbidden => return Answer::status("403 Forbidden"),
            Fault::ServerError => return Answer::status("500 Internal Server Error"),
            Fault::RateLimited(reset) => {
                return Answer::Plain {
                    status: "403 Forbidden",
                    headers: vec![
                        ("x-ratelimit-remaining".into(), "0".into()),
                        ("x-ratelimit-reset".into(), reset.to_string()),
                    ],
                    body: b"{\"message\":\"API rate limit exceeded\"}".to_vec(),
                };
            }
            // Handled when the archive itself is served.
            Fault::DropMidBody | Fault::StallMidBody => {}
        }
    }
    match parts.as_slice() {
        ["repos", owner, repo, "commits", git_ref @ ..] => {
            if request.accept.as_deref() != Some("application/vnd.github.sha") {
                return Answer::status("415 Unsupported Media Type");
            }
            let repo = format!("{owner}/{repo}").to_lowercase();
            match state.refs.get(&(repo.clone(), git_ref.join("/"))) {
                Some(sha) => Answer::Plain {
                    status: "200 OK",
                    headers: vec![("Content-Type".into(), "application/vnd.github.sha".into())],
                    body: sha.clone().into_bytes(),
                },
                None if state.refs.keys().any(|(r, _)| *r == repo) => {
                    Answer::status("422 Unprocessable Entity")
                }
                None => Answer::status("404 Not Found"),
            }
        }
        ["repos", owner, repo, "tarball", sha] => Answer::Plain {
            status: "302 Found",
            headers: vec![(
                "Location".into(),
                format!(
                    "{}/codeload/{owner}/{repo}/legacy.tar.gz/{sha}",
                    state.archive_host.as_deref().unwrap_or("")
                ),
            )],
            body: Vec::new(),
        },
        ["codeload", _, _, "legacy.tar.gz", sha] => match state.tarballs.get(*sha) {
            Some(tarball)
                if matches!(state.fault, Some((Endpoint::Tarball, Fault::DropMidBody))) =>
            {
                Answer::DropMidBody(tarball.clone())
            }
            Some(tarball)
                if matches!(state.fault, Some((Endpoint::Tarball, Fault::StallMidBody))) =>
            {
                Answer::StallMidBody(tarball.clone(), Arc::clone(&state.stall_closed))
            }
            Some(tarball) => Answer::Plain {
                status: "200 OK",
                headers: vec![("Content-Type".into(), "application/x-gzip".into())],
                body: tarball.clone(),
            },
            None => Answer::status("404 Not Found"),
        },
        _ => Answer::status("404 Not Found"),
    }
}

/// Builds tarballs in GitHub's layout: a pax global header carrying the
/// commit, then everything under `owner-repo-<sha7>/`.
pub struct Tarball {
    builder: tar::Builder<GzEncoder<Vec<u8>>>,
    top: String,
}

impl Tarball {
    pub fn new(owner: &str, repo: &str, sha: &str) -> Tarball {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        let record = pax_record("comment", sha);
        let mut header = tar::Header::new_ustar();
        header.set_path("pax_global_header").unwrap();
        header.set_entry_type(tar::EntryType::XGlobalHeader);
        header.set_size(record.len() as u64);
        header.set_mode(0o666);
        header.set_cksum();
        builder.append(&header, record.as_slice()).unwrap();
        let top = format!("{owner}-{repo}-{}", &sha[..7]);
        let mut tarball = Tarball { builder, top };
        let top_dir = format!("{}/", tarball.top);
        tarball.raw(&top_dir, tarball::DIR, b"");
        tarball
    }

    /// A regular file at `path` below the top folder (folders are added).
    pub fn file(mut self, path: &str, data: &[u8]) -> Tarball {
        let mut dir = self.top.clone();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            dir = format!("{dir}/{part}");
            let name = format!("{dir}/");
            self.raw(&name, tarball::DIR, b"");
        }
        let name = format!("{}/{path}", self.top);
        self.raw(&name, tarball::FILE, data);
        self
    }

    /// Every file under `dir`, at the same relative path.
    pub fn tree(mut self, dir: &Path) -> Tarball {
        let mut files = Vec::new();
        walk(dir, &mut files);
        files.sort();
        for file in files {
            let relative = file.strip_prefix(dir).unwrap().to_str().unwrap().to_owned();
            let data = std::fs::read(&file).unwrap();
            self = self.file(&relative, &data);
        }
        self
    }

    /// An entry written as is: any name (absolute, `..`, another top
    /// folder), any type.
    pub fn entry(mut self, name: &str, kind: tar::EntryType, data: &[u8]) -> Tarball {
        self.raw(name, kind, data);
        self
    }

    /// An entry below the top folder, written as is.
    pub fn inner(self, name: &str, kind: tar::EntryType, data: &[u8]) -> Tarball {
        let full = format!("{}/{name}", self.top);
        self.entry(&full, kind, data)
    }

    fn raw(&mut self, name: &str, kind: tar::EntryType, data: &[u8]) {
        let mut header = tar::Header::new_gnu();
        let field = &mut header.as_old_mut().name;
        assert!(
            name.len() <= field.len(),
            "name too long for the test: {name}"
        );
        field[..name.len()].copy_from_slice(name.as_bytes());
        if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
            header.set_link_name("/etc/passwd").unwrap();
        }
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
        header.set_cksum();
        self.builder.append(&header, data).unwrap();
    }

    pub fn build(self) -> Vec<u8> {
        self.builder.into_inner().unwrap().finish().unwrap()
    }
}

/// Entry types, short.
pub mod tarball {
    pub const DIR: tar::EntryType = tar::EntryType::Directory;
    pub const FILE: tar::EntryType = tar::EntryType::Regular;
}

fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}").into_bytes()
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The superpowers corpus as GitHub would serve `obra/superpowers` at `sha`.
pub fn superpowers(sha: &str) -> Vec<u8> {
    Tarball::new("obra", "superpowers", sha)
        .tree(Path::new(CORPUS))
        .build()
}

/// A skill file.
pub fn skill(name: &str, description: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n").into_bytes()
}

/// A gzip bomb: `files` files of 1 MiB + 32 KiB of zeros each under the top
/// folder, about 1 KiB compressed per MiB: the deflate blocks of one MiB of
/// zeros are appended again and again instead of being compressed again.
/// (Each tar header is compressed honestly, followed by 32 KiB of zeros so
/// that the decoder's window holds only zeros when a copied block starts.)
/// No gzip trailer: a reader must stop long before the end.
pub fn gzip_bomb(files: usize) -> Vec<u8> {
    const MIB: usize = 1 << 20;
    const PAD: usize = 32 * 1024;
    let zeros = vec![0u8; MIB];
    // The repeatable unit: one MiB of zeros after a window of zeros.
    let mut scratch = GzEncoder::new(Vec::new(), Compression::best());
    scratch.write_all(&zeros[..PAD]).unwrap();
    scratch.flush().unwrap();
    let before = scratch.get_ref().len();
    scratch.write_all(&zeros).unwrap();
    scratch.flush().unwrap();
    let unit = scratch.get_ref()[before..].to_vec();

    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    for i in 0..files {
        let mut header = tar::Header::new_gnu();
        header.set_path(format!("o-bomb-1234567/f{i}")).unwrap();
        header.set_size((PAD + MIB) as u64);
        header.set_mode(0o644);
        header.set_cksum();
        encoder.write_all(header.as_bytes()).unwrap();
        encoder.write_all(&zeros[..PAD]).unwrap();
        encoder.flush().unwrap();
        encoder.get_mut().extend_from_slice(&unit);
    }
    encoder.get_ref().clone()
}

/// Every path under `root`, relative, sorted. Entries that vanish during the
/// walk (a cleanup still running) are left out.
pub fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if root.exists() {
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let Ok(entry) = entry else { continue };
                let path = entry.path();
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                found.push(path.strip_prefix(root).unwrap().display().to_string());
                if meta.is_dir() {
                    stack.push(path);
                }
            }
        }
    }
    found.sort();
    found
}
