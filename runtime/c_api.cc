// The C ABI of libccltune (ccltune.h): argument checks, translation of NCCL's types to
// ccltune's, and the edge where nothing may escape: every entry point returns a result
// code, keeps the message for ccltuneGetLastError, and never throws.
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "ccltune.h"
#include "runtime/direct/segment_registry.h"
#include "runtime/epilogue_call.h"
#include "runtime/nccl_types.h"
#include "runtime/runtime_comm.h"
#include "runtime/runtime_config.h"

using ccltune::core::Status;
using ccltune::core::StatusCode;
using ccltune::runtime::Call;
using ccltune::runtime::DtypeOf;
using ccltune::runtime::EpilogueArgs;
using ccltune::runtime::EpilogueCall;
using ccltune::runtime::RedOpOf;
using ccltune::runtime::RuntimeComm;

struct ccltuneComm {
  std::unique_ptr<RuntimeComm> impl;
};

namespace {

thread_local std::string g_last_error;

ccltuneResult_t Report(const Status& st) {
  if (st.ok()) return ccltuneSuccess;
  g_last_error = st.message();
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return ccltuneInvalidArgument;
    case StatusCode::kTimeout:
      return ccltuneTimeout;
    case StatusCode::kPeerLost:
    case StatusCode::kAborted:
      return ccltuneNcclError;
    default:
      return st.message().find("nccl") != std::string::npos ? ccltuneNcclError : ccltuneCudaError;
  }
}

// Every entry point: the body's Status, or an internal error for anything thrown.
template <class F>
ccltuneResult_t Guarded(F&& body) {
  try {
    return Report(body());
  } catch (const std::bad_alloc&) {
    g_last_error = "out of host memory";
  } catch (const std::exception& e) {
    g_last_error = std::string("internal error: ") + e.what();
  } catch (...) {
    g_last_error = "internal error";
  }
  return ccltuneInternalError;
}

Status CheckCall(ccltuneComm_t comm, const void* send, void* recv) {
  if (comm == nullptr || !comm->impl) return ccltune::core::InvalidArgument("comm: NULL");
  if (send == nullptr || recv == nullptr)
    return ccltune::core::InvalidArgument("sendbuff/recvbuff: NULL");
  return Status::Ok();
}

ccltuneResult_t Collective(ccltune::core::Op op, const void* send, void* recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t redop, bool reduces, ccltuneComm_t comm,
                           cudaStream_t stream) {
  return Guarded([&]() -> Status {
    CCLTUNE_RETURN_IF_ERROR(CheckCall(comm, send, recv));
    return comm->impl->Run(
        ccltune::runtime::MakeCall(op, send, recv, count, type, redop, reduces, stream));
  });
}

// The arguments both fused entry points share.
EpilogueArgs ArgsOf(ccltune::core::EpilogueKind kind, const void* input, const void* weight,
                    void* out, size_t tokens, size_t hidden, ncclDataType_t datatype) {
  EpilogueArgs a;
  a.kind = kind;
  a.input = input;
  a.weight = weight;
  a.out = out;
  a.tokens = tokens;
  a.hidden = hidden;
  a.dtype = DtypeOf(datatype);
  a.nccl_type = static_cast<int>(datatype);
  return a;
}

// Arguments first (they fail alike on every rank, before the communicator is touched).
ccltuneResult_t EpilogueCollective(const EpilogueArgs& a, ncclDataType_t type, ccltuneComm_t comm,
                                   cudaStream_t stream) {
  return Guarded([&]() -> Status {
    CCLTUNE_ASSIGN_OR_RETURN(const ccltune::core::Epilogue epilogue,
                             ccltune::runtime::CheckEpilogueArgs(a));
    if (comm == nullptr || !comm->impl) return ccltune::core::InvalidArgument("comm: NULL");
    EpilogueCall c;
    c.epilogue = epilogue;
    c.dtype = *a.dtype;
    c.nccl_type = type;
    c.input = a.input;
    c.residual = const_cast<void*>(a.residual);
    c.weight = a.weight;
    c.out = const_cast<void*>(a.out);
    c.tokens = a.tokens;
    c.stream = stream;
    return comm->impl->RunEpilogue(c);
  });
}

Status WriteName(const std::string& choice, char* name, size_t len) {
  if (choice.size() + 1 > len) {
    return ccltune::core::InvalidArgument("len: " + std::to_string(len) + " bytes cannot hold '" +
                                          choice + "'");
  }
  std::memcpy(name, choice.c_str(), choice.size() + 1);
  return Status::Ok();
}

}  // namespace

extern "C" {

ccltuneResult_t ccltuneCommInit(ncclComm_t nccl, const ccltuneConfig_t* config,
                                ccltuneComm_t* comm) {
  return Guarded([&]() -> Status {
    if (comm == nullptr) return ccltune::core::InvalidArgument("comm: NULL output pointer");
    *comm = nullptr;
    CCLTUNE_ASSIGN_OR_RETURN(ccltune::runtime::RuntimeConfig cfg,
                             ccltune::runtime::ResolveConfig(config));
    CCLTUNE_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeComm> impl,
                             RuntimeComm::Init(nccl, std::move(cfg)));
    *comm = new ccltuneComm{std::move(impl)};
    return Status::Ok();
  });
}

ccltuneResult_t ccltuneCommDestroy(ccltuneComm_t comm) {
  return Guarded([&]() -> Status {
    if (comm == nullptr) return Status::Ok();
    const Status finished = RuntimeComm::Close(std::move(comm->impl));
    delete comm;
    return finished;
  });
}

ccltuneResult_t ccltuneAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclRedOp_t op, ccltuneComm_t comm,
                                 cudaStream_t stream) {
  return Collective(ccltune::core::Op::kAllReduce, sendbuff, recvbuff, count, datatype, op, true,
                    comm, stream);
}

ccltuneResult_t ccltuneAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                 ncclDataType_t datatype, ccltuneComm_t comm, cudaStream_t stream) {
  return Collective(ccltune::core::Op::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum,
                    false, comm, stream);
}

ccltuneResult_t ccltuneReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                     ncclDataType_t datatype, ncclRedOp_t op, ccltuneComm_t comm,
                                     cudaStream_t stream) {
  return Collective(ccltune::core::Op::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
                    true, comm, stream);
}

ccltuneResult_t ccltuneGetChoice(ccltuneComm_t comm, ccltuneOp_t op, ncclDataType_t datatype,
                                 ncclRedOp_t redop, size_t bytes, int pooled, char* name,
                                 size_t len) {
  return Guarded([&]() -> Status {
    if (comm == nullptr || !comm->impl) return ccltune::core::InvalidArgument("comm: NULL");
    if (name == nullptr || len == 0) return ccltune::core::InvalidArgument("name/len: no room");
    if (op < ccltuneAllReduceOp || op > ccltuneReduceScatterOp)
      return ccltune::core::InvalidArgument(
          "op: not one of ccltuneAllReduceOp, "
          "ccltuneAllGatherOp, ccltuneReduceScatterOp");
    const ccltune::core::Op ops[] = {ccltune::core::Op::kAllReduce, ccltune::core::Op::kAllGather,
                                     ccltune::core::Op::kReduceScatter};
    const auto dtype = DtypeOf(datatype);
    const auto red =
        op == ccltuneAllGatherOp ? std::optional(ccltune::core::RedOp::kNone) : RedOpOf(redop);
    const std::string choice =
        dtype && red ? comm->impl->ChoiceFor(ops[op], *dtype, *red, bytes, pooled != 0) : "nccl";
    return WriteName(choice, name, len);
  });
}

ccltuneResult_t ccltuneAllReduceResidualRmsNorm(const void* input, void* residual,
                                                const void* weight, void* out, size_t tokens,
                                                size_t hidden, float eps, ncclDataType_t datatype,
                                                ccltuneComm_t comm, cudaStream_t stream) {
  EpilogueArgs a = ArgsOf(ccltune::core::EpilogueKind::kResidualRmsNorm, input, weight, out, tokens,
                          hidden, datatype);
  a.residual = residual;
  a.eps = eps;
  return EpilogueCollective(a, datatype, comm, stream);
}

ccltuneResult_t ccltuneAllReduceBias(const void* input, const void* bias, void* out, size_t tokens,
                                     size_t hidden, ncclDataType_t datatype, ccltuneComm_t comm,
                                     cudaStream_t stream) {
  const EpilogueArgs a =
      ArgsOf(ccltune::core::EpilogueKind::kBias, input, bias, out, tokens, hidden, datatype);
  return EpilogueCollective(a, datatype, comm, stream);
}

ccltuneResult_t ccltuneGetEpilogueChoice(ccltuneComm_t comm, ccltuneEpilogue_t epilogue,
                                         size_t hidden, ncclDataType_t datatype, size_t tokens,
                                         int pooled, char* name, size_t len) {
  using ccltune::core::EpilogueKind;
  return Guarded([&]() -> Status {
    if (comm == nullptr || !comm->impl) return ccltune::core::InvalidArgument("comm: NULL");
    if (name == nullptr || len == 0) return ccltune::core::InvalidArgument("name/len: no room");
    if (epilogue < ccltuneEpilogueNone || epilogue > ccltuneEpilogueResidualRmsNorm) {
      return ccltune::core::InvalidArgument(
          "epilogue=" + std::to_string(static_cast<int>(epilogue)) +
          ": not one of ccltuneEpilogueNone, ccltuneEpilogueBias, ccltuneEpilogueResidualRmsNorm");
    }
    const EpilogueKind kinds[] = {EpilogueKind::kNone, EpilogueKind::kBias,
                                  EpilogueKind::kResidualRmsNorm};
    const auto dtype = DtypeOf(datatype);
    CCLTUNE_RETURN_IF_ERROR(ccltune::runtime::CheckEpilogueShape(
        kinds[epilogue], tokens, hidden, dtype, static_cast<int>(datatype)));
    ccltune::core::Epilogue e;
    e.kind = kinds[epilogue];
    e.hidden = e.none() ? 0 : static_cast<int>(hidden);
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(tokens) * hidden * ccltune::core::DtypeSize(*dtype);
    return WriteName(comm->impl->ChoiceFor(ccltune::core::Op::kAllReduce, *dtype,
                                           ccltune::core::RedOp::kSum, bytes, pooled != 0, e),
                     name, len);
  });
}

ccltuneResult_t ccltuneMemAlloc(ccltuneComm_t comm, void** ptr, size_t bytes) {
  return Guarded([&]() -> Status {
    if (comm == nullptr || !comm->impl || ptr == nullptr)
      return ccltune::core::InvalidArgument("comm/ptr: NULL");
    CCLTUNE_ASSIGN_OR_RETURN(*ptr, comm->impl->MemAlloc(bytes));
    return Status::Ok();
  });
}

ccltuneResult_t ccltuneMemFree(ccltuneComm_t comm, void* ptr) {
  return Guarded([&]() -> Status {
    if (comm == nullptr || !comm->impl) return ccltune::core::InvalidArgument("comm: NULL");
    return comm->impl->MemFree(ptr);
  });
}

ccltuneResult_t ccltuneMemRegister(const void* ptr, size_t bytes) {
  return Guarded([&]() -> Status {
    if (ptr == nullptr || bytes == 0) return ccltune::core::InvalidArgument("ptr/bytes: NULL or 0");
    ccltune::runtime::direct::SegmentRegistry::Get().Register(ptr, bytes);
    return Status::Ok();
  });
}

ccltuneResult_t ccltuneMemDeregister(const void* ptr) {
  return Guarded([&]() -> Status {
    if (ptr == nullptr) return ccltune::core::InvalidArgument("ptr: NULL");
    ccltune::runtime::direct::SegmentRegistry::Get().Deregister(ptr);
    return Status::Ok();
  });
}

ccltuneResult_t ccltuneCommGetAsyncError(ccltuneComm_t comm, ccltuneResult_t* error) {
  return Guarded([&]() -> Status {
    if (comm == nullptr || !comm->impl || error == nullptr)
      return ccltune::core::InvalidArgument("comm/error: NULL");
    const Status st = comm->impl->AsyncError();
    *error = st.ok() ? ccltuneSuccess : ccltuneTimeout;
    if (!st.ok()) g_last_error = st.message();  // which peer, which timeout
    return Status::Ok();
  });
}

const char* ccltuneGetErrorString(ccltuneResult_t result) {
  switch (result) {
    case ccltuneSuccess:
      return "success";
    case ccltuneInvalidArgument:
      return "invalid argument";
    case ccltuneCudaError:
      return "CUDA error";
    case ccltuneNcclError:
      return "NCCL error";
    case ccltuneTimeout:
      return "timeout";
    case ccltuneInternalError:
      return "internal error";
    default:
      return "unknown result";
  }
}

const char* ccltuneGetLastError(void) { return g_last_error.c_str(); }

ccltuneResult_t ccltuneGetVersion(int* version) {
  if (version == nullptr) return ccltuneInvalidArgument;
  *version = CCLTUNE_VERSION_CODE;
  return ccltuneSuccess;
}

}  // extern "C"
