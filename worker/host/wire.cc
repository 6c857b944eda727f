#include "worker/host/wire.h"

namespace ccltune::worker::host {

core::Status CheckHello(const Hello& h, const HelloExpect& expect) {
  if (h.magic != kHelloMagic) return core::InvalidArgument("not a ccltune hello (bad magic)");
  if (h.version != kWireVersion) {
    return core::InvalidArgument("wire version " + std::to_string(h.version) + ", want " +
                                 std::to_string(kWireVersion));
  }
  if (h.to != expect.me) {
    return core::InvalidArgument("hello addressed to rank " + std::to_string(h.to));
  }
  if (h.epoch != expect.epoch) {
    return core::InvalidArgument("hello for epoch " + std::to_string(h.epoch) + ", this is " +
                                 std::to_string(expect.epoch));
  }
  if (h.token != expect.my_nonce) return core::InvalidArgument("hello with a wrong job token");
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
