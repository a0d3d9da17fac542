"""Serve one GGUF model with llama.cpp's OpenAI-compatible HTTP server (xllamacpp) on 127.0.0.1.

Usage: launcher.py MODEL.gguf PORT ALIAS TEMPLATE.jinja CTX THREADS
Started (and stopped with SIGTERM) by scripts/local-model; not a public interface.
"""
import sys
import time

import xllamacpp as xlc

model, port, alias, template, ctx, threads = sys.argv[1:7]
p = xlc.CommonParams()
p.model.path, p.model_alias = model, {alias}
p.hostnames, p.port = ["127.0.0.1"], int(port)
p.n_ctx, p.n_parallel = int(ctx), 1  # one slot: requests are decoded one at a time, in arrival order
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = int(threads)
p.cache_ram_mib = 512  # host-RAM prompt cache (default 8 GiB) kept small for CI machines
p.use_jinja = True
with open(template, encoding="utf-8") as f:
    p.chat_template = f.read()  # the template text, not a file name
server = xlc.Server(p)  # loads the model, then serves HTTP on background threads
print("launcher: listening on", server.listening_address, flush=True)
while True:  # the server lives as long as this process; SIGTERM's default action ends both
    time.sleep(3600)
