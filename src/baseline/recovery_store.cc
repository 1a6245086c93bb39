#include "baseline/recovery_store.h"

#include "common/environment.h"
#include "common/strings.h"
#include "supervise/recovery_json.h"

namespace plumb::baseline {

Record recovery_record(const supervise::RecoveryBaseline& b, const std::string& label) {
  Record r;
  r.created = utc_timestamp();
  r.label = label;
  if (!b.host.empty()) r.hosts = {b.host};
  r.source = "plumb run " + join(b.command, " ");
  r.recovery = supervise::recovery_to_json(b);
  return r;
}

int64_t save_recovery(const supervise::RecoveryBaseline& b, const std::string& db,
                      const std::string& label) {
  Store store(store_location(db), StoreMode::kReadWrite);
  return store.save(recovery_record(b, label));
}

}  // namespace plumb::baseline
