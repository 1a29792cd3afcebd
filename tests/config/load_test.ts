import assert from "node:assert/strict";
import { loadConfig, refusedReadError } from "../../src/config/load.ts";
import { UsageError } from "../../src/config/errors.ts";

const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const all = () => true;

Deno.test("refusedReadError() names each required variable that is unset because it was refused", () => {
  const error = refusedReadError({}, {}, all, undefined);
  assert.ok(error instanceof UsageError);
  assert.match(
    error.message,
    /^SERVICE_API_KEY and SERVICE_AGENT_ID and SERVICE_BASE_URL cannot be read: Deno's permissions do not grant them \(--allow-env\)/,
  );
  assert.ok(!error.message.includes("not set"));
});

Deno.test("refusedReadError() leaves out what a flag, .env or the built-in default gives", () => {
  const flags = { agents: [AGENT], baseUrl: "https://x.example" };
  assert.match(refusedReadError(flags, {}, all, undefined)!.message, /^SERVICE_API_KEY cannot/);
  assert.equal(refusedReadError(flags, { SERVICE_API_KEY: "sk_from_dotenv" }, all), undefined);
  assert.match(
    refusedReadError({ agents: [AGENT] }, {}, all, "https://default.example")!.message,
    /^SERVICE_API_KEY cannot be read: Deno's permissions do not grant it/,
  );
  assert.equal(refusedReadError({}, {}, () => false, undefined), undefined);
  assert.equal(refusedReadError({}, {}, undefined, undefined), undefined);
});

Deno.test("loadConfig() says a refused key was refused, never that it is not set", async () => {
  const deps = {
    env: () => undefined,
    readTextFile: () => Promise.reject(new Deno.errors.NotFound("no .env")),
  };
  const flags = { agents: [AGENT], baseUrl: "https://x.example" };
  await assert.rejects(
    loadConfig(flags, ["SERVICE_API_KEY"], {
      ...deps,
      envRefused: (name) => name === "SERVICE_API_KEY",
    }),
    /^UsageError: SERVICE_API_KEY cannot be read: .*--allow-env/,
  );
  await assert.rejects(loadConfig(flags, ["SERVICE_API_KEY"], deps), /SERVICE_API_KEY is not set/);
});
