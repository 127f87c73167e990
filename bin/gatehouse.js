#!/usr/bin/env node
// `npx gatehouse <command>`: the operator CLI (cli/main.ts), TypeScript run through tsx as `npm start` does.
import { register } from "tsx/esm/api";

register();
await import("../cli/main.ts");
