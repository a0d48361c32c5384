import Foundation
internal import LMDB

/// What ``EventStore/snapshot(root:asOf:to:withHistory:policy:progress:)`` wrote.
public struct SnapshotResult: Sendable, Hashable {
  /// The new store's directory.
  public let path: String
  /// The live objects of the snapshot at its end.
  public let objects: Int
  /// The commits and events of the snapshot's log.
  public let commits: Int
  public let events: Int
  /// The sequence of the source the snapshot shows (the end of its log for "now").
  public let sourceSequence: UInt64
  public let withHistory: Bool
  /// For a snapshot with history: the original sequence of every replayed event, and the
  /// snapshot sequence it became (both ascending).
  let originalSequences: [UInt64]
  let snapshotSequences: [UInt64]

  /// The sequence of the snapshot whose state is the source's state after `original`,
  /// for time travel in the snapshot (`0`: before its first event).
  ///
  /// With history, every original sequence up to ``sourceSequence`` has an image;
  /// without, only ``sourceSequence`` itself. `nil` for any other sequence.
  public func sequence(forOriginal original: UInt64) -> UInt64? {
    guard original <= sourceSequence else { return nil }
    guard withHistory else { return original == sourceSequence ? UInt64(events) : nil }
    // The last replayed event at or before `original`.
    var lo = 0
    var hi = originalSequences.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if originalSequences[mid] <= original { lo = mid + 1 } else { hi = mid }
    }
    return lo == 0 ? 0 : snapshotSequences[lo - 1]
  }
}

extension EventStore {
  /// Writes a new, standalone store (with this store's model) holding the whole store or
  /// one subgraph, now or as of a past sequence, with or without its history.
  ///
  /// ```swift
  /// // Compaction: the current state in a fresh log.
  /// try store.snapshot(to: "/backups/compact")
  /// // ACME and its people as they were at sequence 1200, able to time-travel.
  /// let s = try store.snapshot(root: acme, asOf: 1200, to: "/tmp/acme", withHistory: true)
  /// ```
  ///
  /// A snapshot keeps identities: `Company/5` is `Company/5` in the snapshot too. For a
  /// subgraph it holds the objects reached from `root` along `deep` relationships (the
  /// same walk as a clone) and, so that references still lead somewhere, the objects
  /// they reference (`reference` relationships), without following those further. Every
  /// link between two included objects is kept, whatever its policy; links to objects
  /// left out are dropped.
  ///
  /// - Without history, the snapshot's log holds the state alone: inserts and values,
  ///   then links, in commits of at most ``snapshotCommitEvents`` events. A whole-store
  ///   snapshot without history is a compaction of a long log.
  /// - With history, the events that concern the included objects are replayed commit by
  ///   commit (renumbered, keeping each commit's time and metadata, with
  ///   `sourceCommit` set to the original commit's first sequence), so the snapshot
  ///   time-travels to the same states for the subgraph: see
  ///   ``SnapshotResult/sequence(forOriginal:)``. The objects included are those the
  ///   subgraph held at any time up to `asOf`, read from each object's own history.
  ///
  /// - Parameters:
  ///   - root: the subgraph's root; `nil` for the whole store.
  ///   - asOf: the sequence to snapshot (default: now).
  ///   - path: the new store's directory, which must not exist.
  ///   - withHistory: replay the history, not only the state.
  ///   - policy: copy-policy overrides, as for a clone.
  ///   - progress: told the number of objects read so far while the subgraph is collected,
  ///     as for a clone.
  /// - Throws: ``ErrorCode/alreadyExists`` when `path` exists, and the errors of
  ///   a clone about the root, the sequence and policy names; nothing is written then.
  ///   When writing fails the half-written directory is removed.
  @discardableResult
  public func snapshot(
    root: ObjectID? = nil, asOf: UInt64? = nil, to path: String, withHistory: Bool = false,
    policy: [String: CopyPolicy] = [:], progress: @escaping (Int) -> Void = { _ in }
  ) throws -> SnapshotResult {
    guard !FileManager.default.fileExists(atPath: path) else { throw StoreError.alreadyExists(path: path) }
    return try read { s in
      let reader = s.reader
      let sequence = try VersionReader.resolve(asOf, reader: reader)
      let end = try sequence ?? reader.logEnd().sequence
      var versions = VersionReader(reader: reader, asOf: sequence)
      versions.progress = progress
      // Everything is checked and read before the directory is made.
      var plan: SnapshotPlan
      if withHistory {
        plan = .history(try HistorySubgraph.collect(root: root, end: end, policy: policy, versions: &versions))
      } else {
        plan = .state(try Self.collectState(root: root, policy: policy, versions: &versions))
      }
      // Personal data is copied sealed, with the keys of its subjects (SnapshotKeys): the
      // snapshot is made under this store's key-encryption key and blind-hash key.
      let ring = reader.dbs.keyring
      if let ring, ring.kek == nil {
        throw StoreError.keyRequired(
          path: self.path, detail: "it holds personal data, whose keys a snapshot copies: open it with its key")
      }
      var options = StoreOptions(durability: .relaxed)
      if ring != nil {
        options.keyFile = self.options.keyFile
        options.keyBytes = self.options.keyBytes
      }
      let out = try EventStore.create(
        at: path, model: model, options: options, storeID: nil, blindKey: ring?.blindKey)
      do {
        var writer = SnapshotWriter(store: out)
        if let ring, let target = out.dbs.keyring {
          writer.keys = SnapshotKeys(source: ring, sourceTxn: reader.txn, target: target)
        }
        switch plan {
        case .state(let graph):
          let meta = CommitMetadata(
            clonedFrom: root, extra: ["snapshotOf": storeID, "snapshotSequence": String(end)])
          try writer.write(graph, metadata: meta)
        case .history(let history):
          try writer.replay(history, end: end, versions: &versions)
        }
        plan = .state(Subgraph(root: nil))  // free the plan before the final sync
        try out.flush()
        let objects = try out.read { try $0.reader.txn.statistics(out.dbs.objects).entries }
        return SnapshotResult(
          path: path, objects: objects, commits: writer.commits, events: writer.events, sourceSequence: end,
          withHistory: withHistory, originalSequences: writer.originalSequences,
          snapshotSequences: writer.snapshotSequences)
      } catch {
        try? FileManager.default.removeItem(atPath: path)
        throw error
      }
    }
  }

  /// The live objects of the whole store, or the subgraph under `root` with the objects
  /// it references.
  private static func collectState<T>(
    root: ObjectID?, policy: [String: CopyPolicy], versions: inout VersionReader<T>
  ) throws -> Subgraph {
    if let root {
      let (entity, member) = try versions.requireRoot(root)
      let policies = try CopyPolicyTable(model: versions.model, overrides: policy, scope: entity)
      return try versions.collect(root: root, rootMember: member, policies: policies, references: true)
    }
    var graph = Subgraph(root: nil)
    let reader = versions.reader
    if versions.asOf == nil {
      var ids: [ObjectID] = []
      for e in versions.model.entities { ids += try reader.objects(ofExactly: e.id) }
      for o in ids.sorted() {
        guard let v = try versions.currentMember(o) else { continue }
        graph.add(o, v)
      }
    } else {
      // Every identity ever given, as it was then (deleted ones come back nil).
      var ids: [ObjectID] = []
      try reader.txn.forEach(reader.dbs.identities) { key, _ in
        if let o = KeyField.u64(key, at: 0) { ids.append(ObjectID(o)) }
        return true
      }
      for o in ids { if let v = try versions.member(o) { graph.add(o, v) } }
    }
    return graph
  }
}

private enum SnapshotPlan {
  case state(Subgraph)
  case history(HistorySubgraph)
}

extension EventStore {
  /// The most events a snapshot without history puts in one commit (and one LMDB write
  /// transaction), so that a compaction of a large store stays within LMDB's comfortable
  /// transaction size.
  public static let snapshotCommitEvents = 200_000
}

/// Appends commits to the new store of a snapshot, one LMDB write transaction each
/// (redone in a bigger map when the map is full), counting what it wrote.
struct SnapshotWriter {
  let store: EventStore
  /// The subjects' keys carried with their sealed values, when the source has personal data.
  var keys: SnapshotKeys?
  private(set) var commits = 0
  private(set) var events = 0
  private(set) var originalSequences: [UInt64] = []
  private(set) var snapshotSequences: [UInt64] = []

  init(store: EventStore) { self.store = store }

  /// Writes a state as inserts and values, then links, in commits of bounded size.
  mutating func write(_ graph: Subgraph, metadata: CommitMetadata) throws {
    let replay = SubgraphEvents(model: store.model, graph: graph, links: .restriction, identities: graph.ids)
    let time = Date()
    var buffer: [Event] = []
    buffer.reserveCapacity(min(EventStore.snapshotCommitEvents, graph.count * 4))
    func flushIfFull(_ force: Bool) throws {
      guard buffer.count >= EventStore.snapshotCommitEvents || (force && !buffer.isEmpty) else { return }
      try append(buffer, time: time, metadata: metadata)
      buffer.removeAll(keepingCapacity: true)
    }
    try replay.emitObjects(try replay.states()) { e in
      buffer.append(e)
      try flushIfFull(false)
    }
    try replay.emitLinks { e in
      buffer.append(e)
      try flushIfFull(false)
    }
    try flushIfFull(true)
  }

  /// Appends one commit of already chosen events.
  @discardableResult
  mutating func append(_ events: [Event], time: Date, metadata: CommitMetadata) throws -> CommitInfo {
    let info = try store.commits.run { batch, _ in
      try keys?.carry(events, into: batch)
      return try batch.append(events, time: time, metadata: metadata)
    }
    commits += 1
    self.events += events.count
    return info
  }

  /// Notes that the event at original sequence `original` became `copy`.
  mutating func map(_ original: UInt64, to copy: UInt64) {
    originalSequences.append(original)
    snapshotSequences.append(copy)
  }
}
