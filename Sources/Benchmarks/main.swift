import Foundation

// Usage: Benchmarks [store|query|records|clone|service|ordered|replication|upcast|follow|privacy|coredata|all] [--quick]
//        [--people N]
//        Benchmarks commit-profile …   (below)
//        Benchmarks guard-workload NAME|--list|--none   (below)
// (`--people N`: the upcast section's store sizes, e.g. `--people 150000`; repeatable; the
// follow section's history takes the first.)
// Every figure is printed beside its baseline from the same run, as a ratio.
let arguments = CommandLine.arguments.dropFirst()
/// The numbers given after each `flag` (`--people 5000 --people 150000` gives both).
func numbers(after flag: String) -> [Int] {
  arguments.indices.compactMap { i in
    arguments[i] == flag && i + 1 < arguments.endIndex ? Int(arguments[i + 1]) : nil
  }
}
// The child process of the cross-process latency figure.
if let i = arguments.firstIndex(of: "--latency-writer") {
  do {
    try ServiceBenchmark.latencyWriter(Array(arguments[(i + 1)...]))
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("latency writer failed: \(error)\n".utf8))
    exit(1)
  }
}
// A profiling aid: `Benchmarks commit-profile [N] [--durable] [--tasks T [--inserts]]` makes
// N single-event commits (with tasks, the service benchmark's updates, or its inserts);
// `commit-profile N --batched` makes N of the store section's 1,000-event commits.
if arguments.first == "commit-profile" {
  do {
    let n = arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
    try StoreBenchmark.profileCommits(
      n, durable: arguments.contains("--durable"), tasks: numbers(after: "--tasks").first,
      inserts: arguments.contains("--inserts"), batched: arguments.contains("--batched"))
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
  }
}
// The performance guard's workloads (`Tools/bench guard`, under callgrind):
// `Benchmarks guard-workload NAME` runs one, `Benchmarks guard-workload --list` names them all,
// `Benchmarks guard-workload --none` starts and ends as a workload does and runs none (the
// process's own start and end, which the guard subtracts from each count).
if arguments.first == "guard-workload" {
  let name = arguments.dropFirst().first ?? "--list"
  // Read before `--none` returns, so that its count holds the lookup as a workload's does.
  let slowdown = ProcessInfo.processInfo.environment[GuardWorkload.slowdownVariable]
  if name == "--list" || name == "--none" {
    if name == "--list" { print(GuardWorkload.allCases.map(\.rawValue).joined(separator: "\n")) }
    exit(0)
  }
  guard let workload = GuardWorkload(rawValue: name) else {
    FileHandle.standardError.write(Data("no guard workload \(name); --list names them\n".utf8))
    exit(2)
  }
  do {
    try workload.run(slowdown: slowdown == name)
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("guard workload \(name) failed: \(error)\n".utf8))
    exit(1)
  }
}
let quick = arguments.contains("--quick")
let people = numbers(after: "--people")
let sections = Set(
  arguments.indices.filter { i in
    !arguments[i].hasPrefix("--") && (i == arguments.startIndex || arguments[i - 1] != "--people")
  }.map { arguments[$0] })
func wants(_ name: String) -> Bool { sections.isEmpty || sections.contains("all") || sections.contains(name) }

var tables: [BenchmarkTable] = []
do {
  if wants("store") {
    var t = BenchmarkTable(title: "Store (issue 2)")
    try StoreBenchmark.run(
      events: quick ? 100_000 : 1_000_000, durableCommits: quick ? 300 : 2_000,
      unsyncedCommits: quick ? 20_000 : 100_000, table: &t)
    try RecordBenchmark.insert(count: quick ? 20_000 : 100_000, table: &t)
    tables.append(t)
  }
  if wants("query") {
    var t = BenchmarkTable(title: "Query language and fetch (issue 3)")
    try QueryBenchmark.run(objects: quick ? 100_000 : 1_000_000, table: &t)
    try RecordBenchmark.fetch(count: 100_000, table: &t)
    tables.append(t)
  }
  // The typed records' figures alone (they are also in `store` and `query`).
  if sections.contains("records") {
    var t = BenchmarkTable(title: "Typed records (issue 18)")
    try RecordBenchmark.insert(count: quick ? 20_000 : 100_000, table: &t)
    try RecordBenchmark.fetch(count: 100_000, table: &t)
    tables.append(t)
  }
  if wants("clone") {
    var t = BenchmarkTable(title: "Clone by replaying a subgraph (issue 5)")
    try CloneBenchmark.run(sizes: quick ? [10_000] : [10_000, 100_000], table: &t)
    tables.append(t)
  }
  if wants("service") {
    var t = BenchmarkTable(title: "Service: group commit and subscriptions (issue 6)")
    try ServiceBenchmark.run(commits: quick ? 1_000 : 4_000, latencyCommits: quick ? 200 : 1_000, table: &t)
    tables.append(t)
  }
  if wants("retention") {
    var t = BenchmarkTable(title: "Bounded history: truncation and retention (issue 26)")
    try RetentionBenchmark.run(
      updates: quick ? 200_000 : 1_000_000, objects: 1_000, keep: 10_000, every: 50_000,
      curve: ProcessInfo.processInfo.environment["EVENTGRAPH_RETENTION_CURVE"], table: &t)
    tables.append(t)
  }
  if wants("metrics") {
    var t = BenchmarkTable(title: "Metrics: a scrape's cost (issue 28)")
    try await MetricsBenchmark.run(calls: quick ? 2_000 : 10_000, table: &t)
    tables.append(t)
  }
  if wants("live") {
    var t = BenchmarkTable(title: "Live queries: what keeping a result current costs (issue 28)")
    try LiveQueryBenchmark.run(people: quick ? 2_000 : 10_000, commits: quick ? 2_000 : 20_000, table: &t)
    tables.append(t)
  }
  if wants("groups") {
    var t = BenchmarkTable(title: "Consumer groups: four members beside one consumer (issue 28)")
    try await GroupBenchmark.run(commits: quick ? 5_000 : 20_000, table: &t)
    tables.append(t)
  }
  if wants("ordered") {
    var t = BenchmarkTable(title: "Ordered relationships (issue 19)")
    try OrderedBenchmark.run(
      members: quick ? [2_000, 20_000] : [10_000, 100_000], snapshotMembers: quick ? 6_000 : 60_000, table: &t)
    tables.append(t)
  }
  if wants("replication") {
    var t = BenchmarkTable(title: "Replication to a JetStream cluster (issue 16)")
    try ReplicationBenchmark.run(
      commits: quick ? 2_000 : 8_000, catchUpEvents: quick ? 200_000 : 1_000_000, table: &t)
    tables.append(t)
  }
  if wants("upcast") {
    var t = BenchmarkTable(title: "Upcast of the seed's phone split (issue 4)")
    try UpcastBenchmark.run(
      people: people.isEmpty ? (quick ? [20_000] : [150_000, 1_430_000]) : people, table: &t)
    tables.append(t)
  }
  if wants("follow") {
    var t = BenchmarkTable(title: "Following upcast and its switch under 8 committers (issue 19)")
    try FollowBenchmark.run(people: people.first ?? (quick ? 5_000 : 50_000), seconds: quick ? 2 : 5, table: &t)
    tables.append(t)
  }
  if wants("privacy") {
    var t = BenchmarkTable(title: "Personal data: sealed values, blind index, erasure (issue 30)")
    try PrivacyBenchmark.run(
      events: quick ? 200_000 : 1_000_000, fetches: quick ? 2_000 : 10_000, erasures: quick ? 200 : 1_000, table: &t)
    tables.append(t)
  }
  if wants("coredata") {
    var t = BenchmarkTable(title: "Core Data SQLite store import (issue 17)")
    try CoreDataBenchmark.run(rows: quick ? 100_000 : 1_000_000, batch: 10_000, table: &t)
    tables.append(t)
  }
} catch {
  FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
  exit(1)
}
for t in tables {
  print(t.plainText())
  print()
  print(t.markdown())
  print()
}
