// Starts redis-server and the MongoDB-compatible server once on free loopback ports, pings each
// over a real connection, and stops them. Fails (exit 1) with a clear message when one cannot run.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
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

try {
  await checkRedis();
  await checkMongo();
} catch (e) {
  console.error(`engine check failed: ${e.message}`);
  process.exit(1);
}
