import { createMemoryCoordination } from "../../adapters/coordination/memory.ts";
import { coordinationContract, createManualClock } from "./coordination.contract.ts";

const clock = createManualClock();

coordinationContract(
  "memory",
  async () => {
    const store = createMemoryCoordination({ clock: clock.now });
    return { store, cleanup: () => store.close() };
  },
  { kind: "memory", advance: clock.advance },
);
