import EventGraph
import Foundation

/// Live queries (issue 28, item 2): what keeping a result current adds to each commit, for
/// commits the result cannot see and for commits that change one of its rows, beside the
/// reads they are measured against.
enum LiveQueryBenchmark {
  static func run(people: Int, commits: Int, table: inout BenchmarkTable) throws {
    let directory = try temporaryDirectory(prefix: "eventgraph-live")
    defer { try? removeDirectory(directory) }
    let model = try Model(
      json: Array(
        #"""
        {"name": "Live", "version": 1, "entities": [
          {"name": "Person", "attributes": [{"name": "name", "type": "string", "indexed": true}, {"name": "age", "type": "int32"},
                                            {"name": "score", "type": "int32"}]},
          {"name": "Audit", "attributes": [{"name": "text", "type": "string"}]}]}
        """#.utf8),
      file: "live query benchmark")
    let store = try EventStore.create(
      at: directory + "/store", model: model, options: StoreOptions(durability: .relaxed))
    var rng = SplitMix(seed: 0x11FE)
    try store.write { tx in
      for i in 0..<people {
        _ = try tx.insert(
          "Person",
          ["name": .string("p\(i)"), "age": .int32(Int32(rng.next() % 60)), "score": .int32(Int32(rng.next() % 100))])
      }
    }
    let predicate = "age >= 30"
    let sort = [SortDescriptor("score", ascending: false), SortDescriptor("name")]
    var live = try store.observe("Person", where: predicate, sortedBy: sort).makeAsyncIterator()
    guard let first = try live.step() else {
      throw BaselineError(workload: "live", message: "the live query gave no first result")
    }
    let inResult = first.objects

    // Unrelated commits, stepped after each one and once per 100.
    var stepping = 0.0
    let unrelated = try measure(operations: commits) {
      for i in 0..<commits {
        try store.write { tx in _ = try tx.insert("Audit", ["text": .string("a\(i)")]) }
        let t = monotonicSeconds()
        if try live.step() != nil {
          throw BaselineError(workload: "live", message: "an unrelated commit changed the result")
        }
        stepping += monotonicSeconds() - t
      }
    }
    var batchedStepping = 0.0
    for i in 0..<commits {
      try store.write { tx in _ = try tx.insert("Audit", ["text": .string("b\(i)")]) }
      if i % 100 == 99 {
        let t = monotonicSeconds()
        _ = try live.step()
        batchedStepping += monotonicSeconds() - t
      }
    }
    // The floor of any step: one read transaction that reads the log's end (a step also
    // reads and decodes the new commit, as every follower of the log does).
    let floor = try measure(operations: commits) {
      for _ in 0..<commits { _ = try store.read { try $0.logEnd() } }
    }
    let perCommit = unrelated.seconds / Double(commits) - stepping / Double(commits)
    table.add(
      "live query (\(inResult.count) of \(people) rows), step after each unrelated commit",
      value: stepping / Double(commits) * 1e6, unit: "µs/commit", baseline: perCommit * 1e6,
      baselineName: "the commit itself (relaxed)")
    table.add(
      "the same, stepped once per 100 unrelated commits", value: batchedStepping / Double(commits) * 1e6,
      unit: "µs/commit")
    table.add(
      "floor: a read transaction reading the log's end", value: 1e6 / floor.rate, unit: "µs",
      baseline: stepping / Double(commits) * 1e6, baselineName: "the step after each unrelated commit")

    // Related commits: one row of the result changes its score (it moves).
    let related = max(100, commits / 10)
    var relatedStepping = 0.0
    var changed: [ObjectID] = []
    for _ in 0..<related {
      let o = inResult[Int(rng.next() % UInt64(inResult.count))]
      changed.append(o)
      try store.write { tx in try tx.set(o, "score", .int32(Int32(rng.next() % 100))) }
      let t = monotonicSeconds()
      _ = try live.step()
      relatedStepping += monotonicSeconds() - t
    }
    let rowRead = try measure(operations: related) {
      for o in changed { _ = try store.read { try $0.object(o) } }
    }
    // A fetch of the changed row alone, through the index of its name (what the issue
    // measures a live query's related commit against).
    let names = try store.read { s in try changed.map { try s.value($0, "name") ?? .string("") } }
    let rowFetch = try measure(operations: related) {
      for n in names { _ = try store.fetch("Person", where: "name == $n AND \(predicate)", variables: ["n": n]) }
    }
    let refetch = try measure(operations: 20) {
      for _ in 0..<20 { _ = try store.fetch("Person", where: predicate, sortedBy: sort) }
    }
    table.add(
      "live query, step after a commit that moves one of its rows", value: relatedStepping / Double(related) * 1e6,
      unit: "µs/commit", baseline: 1e6 / rowRead.rate, baselineName: "a snapshot reading the changed row")
    table.add(
      "the same step", value: relatedStepping / Double(related) * 1e6, unit: "µs/commit", baseline: 1e6 / rowFetch.rate,
      baselineName: "a fresh fetch of the changed row (by its indexed name)")
    table.add(
      "floor: reading the log's end, then the changed row", value: 1e6 / floor.rate + 1e6 / rowRead.rate,
      unit: "µs", baseline: relatedStepping / Double(related) * 1e6, baselineName: "the live step")
    table.add(
      "the query fetched afresh (what running it again costs)", value: 1e6 / refetch.rate, unit: "µs/fetch",
      baseline: relatedStepping / Double(related) * 1e6, baselineName: "the live step")
  }
}
