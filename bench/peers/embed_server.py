"""A real embedding model behind an OpenAI-compatible `/v1/embeddings`
endpoint on 127.0.0.1, for the search eval's semantic row
(`skillkit/benches/search_eval.rs`) when no model server is at hand.

The model is WordLlama `l2_supercat` (256 dimensions): static token
embeddings distilled from large language models, averaged over a text's
tokens and scaled to unit length. Its weights and tokenizer ship inside the
`wordllama` wheel, so nothing is downloaded at run time (this machine
reaches PyPI, not Hugging Face).

    python3 -m venv /tmp/wordllama && /tmp/wordllama/bin/pip install wordllama==0.4.0.post1
    /tmp/wordllama/bin/python bench/peers/embed_server.py 8765 &
    SKILLKIT_EMBED_URL=http://127.0.0.1:8765/v1 SKILLKIT_EMBED_MODEL=wordllama-l2-supercat-256 \\
        cargo bench -p skill-kit --features embed --bench search_eval

It answers `POST /v1/embeddings` with `{"model", "input": [texts]}` as
OpenAI does (`{"data": [{"index", "embedding"}]}`); anything else is 404.
Listening on 127.0.0.1 only.
"""

import json
import os
import pathlib
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import wordllama
from wordllama import WordLlama

MODEL = "wordllama-l2-supercat-256"


def load():
    # wordllama 0.4.0 looks for its shipped tokenizer under `tokenizer/`
    # but ships it under `tokenizers/`: point a cache folder at it, so the
    # loader finds it there instead of downloading it.
    package = pathlib.Path(wordllama.__file__).parent
    cache = pathlib.Path(tempfile.mkdtemp(prefix="wordllama-"))
    (cache / "tokenizers").mkdir()
    name = "l2_supercat_tokenizer_config.json"
    os.symlink(package / "tokenizers" / name, cache / "tokenizers" / name)
    return WordLlama.load(config="l2_supercat", dim=256, cache_dir=cache, disable_download=True)


class Handler(BaseHTTPRequestHandler):
    model = None

    def do_POST(self):
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self.send_error(404)
            return
        length = int(self.headers.get("content-length", "0"))
        request = json.loads(self.rfile.read(length))
        texts = request["input"]
        if isinstance(texts, str):
            texts = [texts]
        vectors = Handler.model.embed(texts, norm=True).tolist()
        answer = {
            "object": "list",
            "model": MODEL,
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
        }
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    Handler.model = load()
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"{MODEL} at http://127.0.0.1:{port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
