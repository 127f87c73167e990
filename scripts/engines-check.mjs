// Starts redis-server, the MongoDB-compatible server and nginx once on free loopback ports, pings
// each over a real connection, and stops them. Fails (exit 1) with a clear message when one cannot run.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import Redis from "ioredis";

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function checkRedis() {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"], { stdio: "ignore" });
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on("error", () => {});
      try {
        await client.connect();
        const pong = await client.ping();
        await client.quit();
        console.log(`redis-server on ${port}: ${pong}`);
        return;
      } catch (e) {
        client.disconnect();
        if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${port}: ${e.message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    child.kill("SIGKILL");
  }
}

async function checkMongo() {
  let uri = process.env.MONGODB_URI;
  let child = null;
  if (!uri) {
    child = spawn("node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb", ["--port=0"], { stdio: ["ignore", "pipe", "inherit"] });
    uri = await new Promise((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("jongodb printed no URI within 15 s")), 15_000);
      child.stdout.on("data", (d) => {
        out += d;
        const m = /JONGODB_URI=(\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.on("exit", (code) => reject(new Error(`jongodb exited with ${code}`)));
    });
  }
  try {
    const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 10_000 });
    const res = await client.db("admin").command({ ping: 1 });
    await client.close();
    console.log(`MongoDB-compatible server (${child ? "jongodb" : "MONGODB_URI"}): ping ok=${res.ok}`);
  } finally {
    child?.kill("SIGKILL");
  }
}

async function checkNginx() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-nginx-check-"));
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `daemon off; master_process off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;\n` +
      `events {}\nhttp { access_log off; client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;\n` +
      `  server { listen 127.0.0.1:${port}; location / { return 200 "ok"; } } }\n`,
  );
  const bin = process.env.NGINX_BIN || "/usr/sbin/nginx";
  const child = spawn(bin, ["-p", dir, "-c", conf], { stdio: "ignore" });
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const status = await new Promise((resolve) => {
        const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on("error", () => resolve(null));
        req.end();
      });
      if (status === 200) {
        console.log(`nginx on ${port}: 200`);
        return;
      }
      if (Date.now() > deadline) throw new Error(`nginx (${bin}) did not answer on ${port}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  await checkRedis();
  await checkMongo();
  await checkNginx();
} catch (e) {
  console.error(`engine check failed: ${e.message}`);
  process.exit(1);
}
