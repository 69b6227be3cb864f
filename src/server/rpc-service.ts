import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";

/** RpcService pairs a service descriptor with its implementation, ready for a Connect router. */
export interface RpcService {
  readonly service: DescService;
  readonly impl: ServiceImpl<DescService>;
}

/** rpcService type-checks impl against its service, then forgets the exact type so services can share a list. */
export function rpcService<S extends DescService>(service: S, impl: ServiceImpl<S>): RpcService {
  return { service, impl: impl as unknown as ServiceImpl<DescService> };
}
