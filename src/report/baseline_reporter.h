// Reporters for stored baselines: the `plumb list` table, the `plumb show` summary and the
// `plumb export` JSON (schema plumb.baseline/1).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "baseline/store.h"

namespace plumb::report {

inline constexpr const char* kBaselineSchema = "plumb.baseline/1";

void print_baseline_list(const std::vector<baseline::Entry>& entries, std::ostream& out);
void print_baseline_summary(const baseline::Record& record, std::ostream& out);
// Its pieces, which plumb show of a baseline set prints under its own headings: the header
// ("# baseline 3 · created · source · label", what makes it not valid, "# hosts: ...", the Slurm
// job), the versions ("# nccl           2.18.3", those found) and one line per layer and
// collective of the comm rows.
void print_record_header(const baseline::Record& record, std::ostream& out);
void print_versions(const baseline::Record& record, std::ostream& out);
void print_comm_summary(const baseline::Record& record, std::ostream& out);
// What makes a record not valid (baseline/validity.h), when anything does: its marks on one line
// ("WRONG RESULTS · INCOMPLETE: sweep ended at 4 MiB of 1 GiB"), then each issue indented. Part
// of plumb show for every kind of record.
void print_validity(const baseline::Record& record, std::ostream& out);

// The "job" of a plumb.comm/1 or plumb.recovery/1 record (sysinfo/slurm_job.h) in one line,
// escaped for the terminal: "Slurm job 8 on node[1-2] (2 node(s)), step 0: 16 task(s), srun
// --mpi=pmix"; "" when the record holds none.
std::string job_summary(const nlohmann::json& record_part);

// The record as one document: its fields, topo, env, comm with results[] rows carrying the
// plumb.comm/1 fields (empty for a step record), step (plumb.step/1) and recovery
// (plumb.recovery/1) when it holds one.
nlohmann::json baseline_json(const baseline::Record& record);

}  // namespace plumb::report
