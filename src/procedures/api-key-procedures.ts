import { ApiKeyService } from "../../gen/payments/v2/api_keys_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { ApiKeyService as ApiKeyRules } from "../service/api-key-service.js";

/** createApiKeyProcedures adapts the key API to its RPCs (and, through their google.api.http rules, to REST). */
export function createApiKeyProcedures(rules: ApiKeyRules): Procedure[] {
  return defineProcedures(
    ApiKeyService,
    {
      createApiKey: (request, call) => rules.create(call, request),
      listApiKeys: (_request, call) => rules.list(call),
      rollApiKey: (request, call) => rules.roll(call, request),
      revokeApiKey: (request, call) => rules.revoke(call, request.id),
    },
    { requiresKey: true },
  );
}
