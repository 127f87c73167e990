import { createRedisCoordination } from "../../adapters/coordination/redis.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer } from "../support/redis-server.ts";
import { coordinationContract } from "./coordination.contract.ts";

const server = await startRedisServer();
if (isRedisSkip(server)) {
  reportRedisSkip("coordination contract", server.skip);
} else {
  const keyPrefix = `gh:test:${process.pid}:${Date.now().toString(36)}:`;
  coordinationContract(
    "redis",
    async () => {
      const store = await createRedisCoordination({ url: server.url, keyPrefix });
      const peer = await createRedisCoordination({ url: server.url, keyPrefix });
      return { store, peer, cleanup: async () => void (await Promise.all([store.close(), peer.close()])) };
    },
    { kind: "redis", teardown: server.stop },
  );
}
