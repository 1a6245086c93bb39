#include "plan/outlook.h"

namespace plumb::plan {

Outlook outlook(const Prediction& p, const ModelSpec& m, const HardwareSpec& hw,
                const OutlookInputs& in) {
  Outlook o;
  o.inputs = in;
  const int64_t devices = p.layout.devices();
  o.job_mtbf_h = job_mtbf_hours(in.failures_per_device_hour, devices);
  o.checkpoint_bytes = checkpoint_bytes(static_cast<double>(parameter_count(m)));
  const double delta = checkpoint_seconds(o.checkpoint_bytes, in.storage_gbps);
  const double mtbf_s = o.job_mtbf_h * 3600;
  o.young_s = young_interval(delta, mtbf_s);
  o.daly_s = daly_interval(delta, mtbf_s);
  o.at_daly = expected_goodput(mtbf_s, delta, in.restart_s, o.daly_s);
  o.effective_tokens_per_s = p.tokens_per_s * o.at_daly.goodput;
  if (in.tokens && o.at_daly.goodput > 0) {
    o.cost = training_cost(*in.tokens, p.tokens_per_s, o.at_daly.goodput, devices, hw.tdp_w, in.pue,
                           hw.rent_usd_per_hour);
  }
  return o;
}

}  // namespace plumb::plan
