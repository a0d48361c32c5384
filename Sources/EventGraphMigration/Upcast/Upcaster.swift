import EventGraph
import Foundation
import LMDB

/// What an upcast did.
public struct UpcastReport: Sendable {
  public var sourceVersion = 0
  public var destinationVersion = 0
  public var commitsRead = 0
  public var eventsRead = 0
  public var commitsWritten = 0
  public var eventsWritten = 0
  /// Live destination objects per entity at the end.
  public var objectsPerEntity: [(entity: String, count: Int)] = []
  public var seconds = 0.0
  /// Whether the run continued an interrupted one from its checkpoint.
  public var resumed = false
  /// Whether the store now runs at the destination version.
  public var switched = false
}

/// Replays a source log, commit by commit, through a compiled mapping into a log of the
/// destination version, keeping the commutation law: after every source commit, the
/// destination state is the mapping of the source state (Docs/migration.md).
///
/// The output log, its projections, the scratch source projection, the associations and the
/// checkpoint are written in the same LMDB transactions, batch by batch, so a killed upcast
/// resumes where its last batch ended and finishes with the same bytes as an uninterrupted
/// one.
final class Upcaster {
  /// One step of a chain (v1→v2, v2→v3, …): where it reads its source state and where it
  /// writes.
  ///
  /// Only the last step writes a log; the others keep their output as scratch
  /// projections that the next step reads, so an intermediate version is never a log.
  struct Stage {
    let mapping: CompiledMapping
    let source: StoreDatabases
    let output: StoreDatabases
    let forward: Database
    let reverse: Database
    let isFinal: Bool
    /// What each entity mapping reads, by mapping index.
    let inputs: [MappingInputs]
  }

  let store: EventStore
  let stages: [Stage]
  let env: Environment
  /// The store's databases at the version the chain starts from.
  let sourceDBs: StoreDatabases
  let keys: UpcastKeys
  /// Source events per LMDB transaction.
  ///
  /// Per batch the upcaster holds the source objects the batch touched: 10,000 events kept
  /// the benchmark's peak memory at 11 MiB where 50,000 held 54 MiB, at the same speed.
  var batchEvents = 10_000
  /// Whether starting afresh may discard commits written in the destination version after
  /// an earlier upcast.
  var discardsNewerCommits = false
  /// Stops after this many batches (tests of resumption); `nil` runs to the end.
  var stopAfterBatches: Int?
  /// Observes the stage calls, for tests and for the docs' claims.
  var onStage: (@Sendable (String) -> Void)?

  /// The first step's mapping (the only one of a single-step upcast).
  var mapping: CompiledMapping { stages[0].mapping }
  var first: CompiledMapping { stages[0].mapping }
  var last: CompiledMapping { stages[stages.count - 1].mapping }

  convenience init(store: EventStore, mapping: CompiledMapping) throws {
    try self.init(store: store, chain: [mapping])
  }

  init(store: EventStore, chain: [CompiledMapping]) throws {
    guard let firstStep = chain.first, let lastStep = chain.last else {
      throw MigrationError("an upcast needs a mapping")
    }
    self.store = store
    self.env = store.env
    let keys = UpcastKeys(version: lastStep.destinationModel.version)
    self.keys = keys
    guard store.model.version == firstStep.sourceModel.version else {
      throw MigrationError(
        "the store is at version \(store.model.version), the mapping starts at \(firstStep.sourceModel.version)")
    }
    for (a, b) in zip(chain, chain.dropFirst()) where a.destinationModel.version != b.sourceModel.version {
      throw MigrationError(
        "the chain is broken: a step ends at version \(a.destinationModel.version), the next starts at \(b.sourceModel.version)"
      )
    }
    guard let s = try StoreDatabases.open(env, version: firstStep.sourceModel.version, create: false) else {
      throw MigrationError("cannot open the store's version \(firstStep.sourceModel.version)")
    }
    self.sourceDBs = s
    var stages: [Stage] = []
    var input = try StoreDatabases.open(
      env, version: firstStep.sourceModel.version, prefix: keys.scratchPrefix, create: true)
    for (i, m) in chain.enumerated() {
      let isFinal = i == chain.count - 1
      let output =
        isFinal
        ? try StoreDatabases.open(env, version: m.destinationModel.version, create: true)
        : try StoreDatabases.open(env, version: m.destinationModel.version, prefix: keys.stagePrefix(i), create: true)
      guard let source = input, let output, let f = try env.openDatabase(keys.forwardName(stage: i), create: true),
        let r = try env.openDatabase(keys.reverseName(stage: i), create: true)
      else { throw MigrationError("cannot open the upcast's databases") }
      stages.append(
        Stage(
          mapping: m, source: source, output: output, forward: f, reverse: r, isFinal: isFinal,
          inputs: MappingInputs.of(m)))
      input = output
    }
    self.stages = stages
  }

  /// A fingerprint of the chain's mappings and models: resuming with others is refused.
  var fingerprint: String {
    var parts: [String] = []
    for stage in stages {
      let mapping = stage.mapping
      parts.append(mapping.destinationModel.jsonText)
      for m in mapping.mappings {
        var p =
          "\(m.name)|\(m.source?.name ?? "")|\(m.destination?.name ?? "")|\(m.filter?.description ?? "")|\(m.policyName ?? "")|\(m.policy?.version ?? "")"
        p += m.attributes.map { "|\($0.0.name)=\($0.1)" }.joined()
        for i in m.instances {
          p += "|[\(i.key) \(i.when?.description ?? "")" + i.attributes.map { " \($0.0.name)=\($0.1)" }.joined() + "]"
        }
        p += m.relationships.map { "|\($0.0.name)<-\($0.target):\($0.sources)" }.joined()
        parts.append(p)
      }
    }
    return String(CRC32C.checksum(Array(parts.joined(separator: "\n").utf8)), radix: 16)
  }

  // MARK: - Running

  func run(progress: (Int) -> Void = { _ in }) throws -> UpcastReport {
    let start = ContinuousClock.now
    var report = UpcastReport()
    report.sourceVersion = first.sourceModel.version
    report.destinationVersion = last.destinationModel.version
    report.resumed = try prepare()
    var batches = 0
    while true {
      if let stop = stopAfterBatches, batches >= stop { break }
      var batch = UpcastReport()
      let done: Bool
      do {
        // An aborted batch is redone in a bigger map, counted afresh.
        done = try store.commits.run { txn, _ in
          batch = UpcastReport()
          return try runBatch(txn, into: &batch)
        }
      } catch is SourceIdentitiesOverlap {
        // New source objects took identities the destination may have given already:
        // start over, so that they keep theirs (prepare sees the overlap and starts afresh).
        report = UpcastReport()
        report.sourceVersion = first.sourceModel.version
        report.destinationVersion = last.destinationModel.version
        _ = try prepare()
        continue
      }
      batches += 1
      report.commitsRead += batch.commitsRead
      report.eventsRead += batch.eventsRead
      report.commitsWritten += batch.commitsWritten
      report.eventsWritten += batch.eventsWritten
      progress(report.eventsRead)
      if done {
        report.switched = true
        break
      }
    }
    report.objectsPerEntity = try env.read { txn in
      try last.destinationModel.entities.map { e in
        var n = 0
        var key = [UInt8(e.id.rawValue >> 8), UInt8(truncatingIfNeeded: e.id.rawValue)]
        try txn.forEach(stages[stages.count - 1].output.entities, from: key) { k, _ in
          guard k.count == 10, k[0] == key[0], k[1] == key[1] else { return false }
          n += 1
          return true
        }
        key.removeAll()
        return (e.name, n)
      }
    }
    report.seconds =
      Double((ContinuousClock.now - start).components.attoseconds) / 1e18
      + Double((ContinuousClock.now - start).components.seconds)
    return report
  }

  /// Starts afresh, or finds the checkpoint of an interrupted run.
  ///
  /// Returns whether it resumes.
  private func prepare() throws -> Bool {
    try env.write { txn in
      let last = try GraphReader(txn: txn.handle, dbs: sourceDBs, model: first.sourceModel).lastObjectID()
      // Resume only if no source object was made since the start: new objects of the
      // destination take identities from `base` on, which new source objects would share.
      if let existing = try txn.get(sourceDBs.meta, key: keys.fingerprint),
        String(decoding: existing, as: UTF8.self) == fingerprint,
        let b = try txn.get(sourceDBs.meta, key: keys.base), let base = BigEndianKey.decode(b),
        last < base
      {
        return true
      }
      // Starting afresh empties the destination log: refuse if commits were written in that
      // version after an earlier upcast (they are at its end, without a source commit).
      let output = stages[stages.count - 1].output
      let c = try txn.cursor(output.log)
      if try c.last() {
        let tail = try c.withCurrent { k, v in
          try CommitCodec.decode(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
        }
        if tail.metadata.sourceCommit == nil && !discardsNewerCommits {
          throw MigrationError(
            "version \(self.last.destinationModel.version) already has commits written after an earlier upcast (the last is commit \(tail.number)); upcasting again would discard them (allow it with --discard-newer)"
          )
        }
      }
      // Fresh: every step's output, scratch state and associations start empty.
      for (_, db) in stages[0].source.projections { try txn.empty(db) }
      for stage in stages {
        for (_, db) in stage.output.projections { try txn.empty(db) }
        try txn.empty(stage.output.log)
        try txn.empty(stage.forward)
        try txn.empty(stage.reverse)
        try txn.put(
          sourceDBs.models, key: BigEndianKey(UInt64(stage.mapping.destinationModel.version)),
          value: Array(stage.mapping.destinationModel.jsonText.utf8))
      }
      try txn.put(sourceDBs.meta, key: keys.fingerprint, value: fingerprint)
      try txn.put(sourceDBs.meta, key: keys.checkpoint, value: BigEndianKey(0))
      try txn.put(sourceDBs.meta, key: keys.nextID, value: BigEndianKey(last + 1))
      try txn.put(sourceDBs.meta, key: keys.base, value: BigEndianKey(last + 1))
      return false
    }
  }
}

/// Source objects were made, while the upcast was under way, with identities the
/// destination may already have given to objects of its own: the upcast starts over.
struct SourceIdentitiesOverlap: Error {}

/// The `meta` keys and scratch database names of an upcast to one version.
struct UpcastKeys {
  let version: Int
  var prefix: String { "upcast.v\(version)." }
  var scratchPrefix: String { prefix + "source." }
  func stagePrefix(_ i: Int) -> String { prefix + "step\(i)." }
  func forwardName(stage i: Int) -> String { prefix + (i == 0 ? "" : "step\(i).") + "associations" }
  func reverseName(stage i: Int) -> String { prefix + (i == 0 ? "" : "step\(i).") + "associations.reverse" }
  var fingerprint: String { prefix + "fingerprint" }
  /// The last sequence of the last source commit done.
  var checkpoint: String { prefix + "checkpoint" }
  var nextID: String { prefix + "nextID" }
  /// The first identity the destination could give a new object: one past the source's
  /// last identity when the upcast started.
  var base: String { prefix + "base" }
  /// Set at the switch: the version the destination was made from, and that log's end then.
  var from: String { prefix + "from" }
  var sourceEnd: String { prefix + "sourceEnd" }
}
