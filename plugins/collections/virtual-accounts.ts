/** The virtual-account service's former module path, kept for bench/scenarios (see virtual-accounts/). */
export { VIRTUAL_ACCOUNTS_COLLECTION, deriveStatus, openVirtualAccounts, type VirtualAccount } from "./virtual-accounts/account.ts";
export { createVirtualAccountService } from "./virtual-accounts/account-service.ts";
