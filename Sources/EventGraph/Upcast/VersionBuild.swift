import Foundation
internal import LMDB

/// The storage side of an upcast: a destination version built from the active version's
/// log, through a chain of steps, beside the store, batch by batch with its checkpoint,
/// then switched to in one transaction.
///
/// The migration module decides what each source commit becomes (``UpcastStep``); this type
/// owns every database it reads and writes: the first step's scratch copy of the source
/// state, each step's output (the last one a version's log and projections, the others
/// scratch projections), the associations, and the `meta` keys of the checkpoint.
///
/// It is public so that a migration engine outside this module — `EventGraphMigration`'s
/// `Upcaster` is the one in this package — can drive it without reaching LMDB or the codec:
///
/// ```swift
/// let build = try VersionBuild(store: store, steps: [(destination: v2, keepsReverse: false)])
/// _ = try build.start(fingerprint: VersionBuild.fingerprint(mappingText), discardingNewerCommits: false)
/// while true {
///   let counts = try build.runBatch(maxEvents: 10_000) { step in
///     let tx = step.destination(metadata: step.commit.metadata)
///     // … write what the source commit (step.commit, step.events, step.source) becomes …
///     try step.finish(tx)
///   }
///   if counts.finished { break }
/// }
/// ```
///
/// A batch runs in one write transaction through the store's commit writer; the objects it
/// hands `migrate` (``UpcastStep``, ``SourceGraph``, ``Associations``) share it and must not
/// be kept past the call.
public final class VersionBuild {
  /// One step of the chain (v1→v2, v2→v3, …): where it reads its source state and where it writes.
  struct Stage {
    let sourceModel: Model
    let destinationModel: Model
    let source: StoreDatabases
    let output: StoreDatabases
    let forward: Database
    let reverse: Database
    let keepsReverse: Bool
    var isFinal: Bool { output.prefix.isEmpty }
  }

  let store: EventStore
  let stages: [Stage]
  /// The store's databases at the version the chain starts from.
  let sourceDBs: StoreDatabases
  let keys: UpcastKeys
  /// What ``start(fingerprint:discardingNewerCommits:)`` was given, to start again with.
  private var started = (fingerprint: "", discardingNewerCommits: false)

  /// Opens (creating) the databases of a chain of steps from the store's active version.
  ///
  /// - Parameters:
  ///   - store: the store to upcast.
  ///   - steps: each step's destination model, and whether it keeps the way back from
  ///     destination to source in its associations (Swift policies read it).
  public init(store: EventStore, steps: [(destination: Model, keepsReverse: Bool)]) throws {
    guard let lastStep = steps.last else { throw VersionBuildError("an upcast needs a mapping") }
    self.store = store
    let env = store.env
    let keys = UpcastKeys(version: lastStep.destination.version)
    self.keys = keys
    self.sourceDBs = store.dbs
    var stages: [Stage] = []
    var sourceModel = store.model
    var input = try StoreDatabases.open(env, version: sourceModel.version, prefix: keys.scratchPrefix, create: true)
    for (i, step) in steps.enumerated() {
      let version = step.destination.version
      let output =
        i == steps.count - 1
        ? try StoreDatabases.open(env, version: version, create: true)
        : try StoreDatabases.open(env, version: version, prefix: keys.stagePrefix(i), create: true)
      guard var source = input, var output, let f = try env.openDatabase(keys.forwardName(stage: i), create: true),
        let r = try env.openDatabase(keys.reverseName(stage: i), create: true)
      else { throw VersionBuildError("cannot open the upcast's databases") }
      // The store's keys are the same for every version: sealed values pass through, new
      // personal values of the destination are sealed with them.
      source.keyring = store.dbs.keyring
      output.keyring = store.dbs.keyring
      stages.append(
        Stage(
          sourceModel: sourceModel, destinationModel: step.destination, source: source, output: output, forward: f,
          reverse: r, keepsReverse: step.keepsReverse))
      input = output
      sourceModel = step.destination
    }
    self.stages = stages
  }

  var destinationModel: Model { stages[stages.count - 1].destinationModel }

  /// This process's ID, as the builder records it (``MetaKey/upcastBuilder``).
  static var processID: String { String(ProcessInfo.processInfo.processIdentifier) }

  /// A short fingerprint of `text` (the chain's models and mappings): resuming an upcast
  /// with other ones is refused.
  public static func fingerprint(_ text: String) -> String {
    String(CRC32C.checksum(Array(text.utf8)), radix: 16)
  }

  // MARK: - Starting

  /// Starts afresh, or finds the checkpoint of an interrupted build with this fingerprint.
  ///
  /// - Parameters:
  ///   - fingerprint: the chain's ``fingerprint(_:)``; a checkpoint with another one is
  ///     not resumed.
  ///   - discardingNewerCommits: start afresh even though the destination version has
  ///     commits of its own (written after an earlier upcast, then rolled back).
  /// - Returns: whether it resumes.
  public func start(fingerprint: String, discardingNewerCommits: Bool) throws -> Bool {
    started = (fingerprint, discardingNewerCommits)
    let (sourceDBs, keys, stages, store) = (self.sourceDBs, self.keys, self.stages, self.store)
    let destination = destinationModel
    return try store.commits.run { batch, _ in
      let txn = batch.handle
      let last = try GraphReader(txn: txn, dbs: sourceDBs, model: store.model).lastObjectID()
      // Resume only if no source object was made since the start: new objects of the
      // destination take identities from `base` on, which new source objects would share.
      if let existing = try txn.get(sourceDBs.meta, key: keys.fingerprint),
        String(decoding: existing, as: UTF8.self) == fingerprint,
        let b = try txn.get(sourceDBs.meta, key: keys.base), let base = BigEndianKey.decode(b),
        last < base
      {
        try txn.put(sourceDBs.meta, key: MetaKey.upcastBuilder, value: Self.processID)
        return true
      }
      // Starting afresh empties the destination log: refuse if commits were written in that
      // version after an earlier upcast (they are at its end, without a source commit).
      let output = stages[stages.count - 1].output
      let tail = try txn.withCursor(output.log) { c in
        try c.last()
          ? try c.withCurrent { k, v in try CommitCodec.decode(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)") }
          : nil
      }
      if let tail {
        if tail.metadata.sourceCommit == nil && !discardingNewerCommits {
          throw VersionBuildError(
            "version \(destination.version) already has commits written after an earlier upcast (the last is commit \(tail.number)); upcasting again would discard them",
            remedy: .discardNewer)
        }
      }
      for stage in stages { try Self.refuseReplacing(stage.destinationModel, txn, sourceDBs, store) }
      // Fresh: every step's output, scratch state and associations start empty.
      for (_, db) in stages[0].source.projections { try txn.empty(db) }
      for stage in stages {
        for (_, db) in stage.output.projections { try txn.empty(db) }
        try txn.empty(stage.output.log)
        try txn.empty(stage.forward)
        try txn.empty(stage.reverse)
        try sourceDBs.putModel(stage.destinationModel, txn)
      }
      try txn.put(sourceDBs.meta, key: keys.fingerprint, value: fingerprint)
      try txn.put(sourceDBs.meta, key: keys.checkpoint, value: BigEndianKey(0))
      // Each step gives identities from its destination version's band.
      let bases = stages.map { Self.firstNewIdentity(version: $0.destinationModel.version, sourceLast: last) }
      for (i, base) in bases.enumerated() {
        try txn.put(sourceDBs.meta, key: keys.nextID(stage: i, of: stages.count), value: BigEndianKey(base))
      }
      try txn.put(sourceDBs.meta, key: keys.base, value: BigEndianKey(bases.min() ?? last + 1))
      try txn.put(sourceDBs.meta, key: MetaKey.upcastBuilder, value: Self.processID)
      return false
    }
  }

  /// Refuses a model whose version the store knows with another content hash: a version
  /// that holds commits, is active, or was ever switched to. (An unfinished upcast's
  /// model, never used, may be replaced.)
  private static func refuseReplacing(_ model: Model, _ txn: WriteHandle, _ dbs: StoreDatabases, _ store: EventStore)
    throws
  {
    let v = model.version
    guard let stored = try dbs.storedModel(v, txn, path: store.path) else { return }
    let hash = try dbs.storedModelHash(v, txn) ?? stored.contentHash
    guard hash != model.contentHash else { return }
    let active = try txn.activeVersion(in: dbs.meta)
    let log = try txn.openDatabase(StoreDatabases.name("log", version: v), create: false)
    let hasCommits = try log.map { try txn.statistics($0).entries > 0 } ?? false
    let switchedTo = try txn.contains(dbs.meta, key: UpcastKeys(version: v).from)
    guard active == v || hasCommits || switchedTo else { return }
    throw VersionBuildError(
      "the store already has a model version \(v) (sha256 \(hash.prefix(12))…), and this one differs (sha256 \(model.contentHash.prefix(12))…): \(stored.differences(from: model, names: ("the store's", "the new one")).joined(separator: ", ")); give the new model another version number"
    )
  }

  /// Where the identities of objects an upcast makes (split-out objects, a policy's new
  /// ones) begin: the destination version's band, `version` × 10^12 + 1.
  ///
  /// The band depends on nothing the source log has: so the upcast of the log's first k
  /// commits gives the same identities as the upcast of the whole log, commit for commit
  /// (a following upcast depends on it), and a source that keeps taking inserts, with
  /// identities counted from its own last one, never reaches the band. Above the band
  /// only when the source's identities already are (they came from such a band themselves
  /// and overflowed it): then one past the source's last.
  static func firstNewIdentity(version: Int, sourceLast: UInt64) -> UInt64 {
    let (band, overflow) = UInt64(max(0, version)).multipliedReportingOverflow(by: 1_000_000_000_000)
    guard !overflow, band < UInt64.max else { return sourceLast + 1 }
    return max(band + 1, sourceLast + 1)
  }

  // MARK: - Batches

  /// What one batch did: the source commits and events it read, the destination commits
  /// and events it wrote, whether it switched the store to the destination, whether it
  /// found source objects made with identities the destination may have given, and so
  /// started the upcast afresh instead, and whether it read to the end of the source log.
  public typealias BatchCounts = (
    commitsRead: Int, eventsRead: Int, commitsWritten: Int, eventsWritten: Int, finished: Bool, restarted: Bool,
    caughtUp: Bool
  )

  /// Runs one LMDB transaction: source commits from the checkpoint until `maxEvents` are
  /// read or the log ends, each through every step (`migrate` is called once per commit and
  /// step, in order); then the checkpoint; at the end of the log, the switch to the
  /// destination version when `switching` (a following upcast passes `false`: it keeps
  /// the destination caught up and switches only when asked, `requestSwitch(_:to:)`).
  ///
  /// The end of the log is found with the writer lock held, so the last catch-up and the
  /// switch are one transaction: a source commit is either in it or, coming after it,
  /// refused (``ErrorCode/versionChanged``).
  ///
  /// - Throws: what `migrate` throws, the store's errors.
  public func runBatch(maxEvents: Int, switching: Bool = true, _ migrate: (UpcastStep) throws -> Void) throws
    -> BatchCounts
  {
    do {
      return try store.commits.run { batch, _ in
        try runBatch(batch, maxEvents: maxEvents, switching: switching, migrate)
      }
    } catch is SourceIdentitiesOverlap {
      // New source objects took identities the destination may have given already: start
      // over, so that they keep theirs (`start` sees the overlap and starts afresh).
      _ = try start(fingerprint: started.fingerprint, discardingNewerCommits: started.discardingNewerCommits)
      return (0, 0, 0, 0, false, true, false)
    }
  }

  private func runBatch(
    _ batch: CommitBatch, maxEvents: Int, switching: Bool, _ migrate: (UpcastStep) throws -> Void
  ) throws -> BatchCounts {
    let txn = batch.handle
    // The source version must still be the active one (a rollback or another switch since
    // this build began would make its output stale).
    try batch.checkActive()
    let meta = sourceDBs.meta
    guard let cp = try txn.get(meta, key: keys.checkpoint),
      let checkpoint = BigEndianKey.decode(cp)
    else { throw VersionBuildError("the upcast's checkpoint is missing") }
    let counters = try stages.indices.map { i in
      guard let nx = try txn.get(meta, key: keys.nextID(stage: i, of: stages.count)), let next = BigEndianKey.decode(nx)
      else { throw VersionBuildError("the upcast's checkpoint is missing") }
      return IdentityCounter(next: next)
    }
    // Another writer may have added source objects since the upcast started (it writes
    // batch by batch): their identities may be given already.
    guard let b = try txn.get(meta, key: keys.base), let base = BigEndianKey.decode(b),
      try GraphReader(txn: txn, dbs: sourceDBs, model: store.model).lastObjectID() < base
    else { throw SourceIdentitiesOverlap() }
    var counts: BatchCounts = (0, 0, 0, 0, false, false, false)
    var done = true
    var last = checkpoint
    var events = 0
    var commits: [Commit] = []
    try txn.forEach(sourceDBs.log, from: BigEndianKey(checkpoint + 1)) { k, v in
      let key = KeyField.u64(k, at: 0) ?? 0
      guard events < maxEvents else {
        done = false
        return false
      }
      let c = try CommitCodec.decode(v, context: "source log entry \(key)")
      commits.append(c)
      events += c.events.count
      return true
    }
    // The first step's source state lives for the batch (it applies the source events); a
    // later step reads what the step before it wrote, fresh for every commit.
    let sourceProjector = Projector(txn: txn, dbs: stages[0].source, model: stages[0].sourceModel)
    let associations = stages.map {
      Associations(txn: txn, forward: $0.forward, reverse: $0.reverse, keepsReverse: $0.keepsReverse)
    }
    // Each step's destination for the whole batch: its log end is read once, and one
    // commit's projector buffers serve the next (a fresh batch per commit read the log's end
    // and grew a projector's tables from empty every time).
    let destinations = stages.map { batch.writing(to: $0.output, model: $0.destinationModel) }
    for c in commits {
      var input = c.events
      for (i, stage) in stages.enumerated() {
        let projector =
          i == 0 ? sourceProjector : Projector(txn: txn, dbs: stage.source, model: stage.sourceModel)
        associations[i].forgetRemembered()
        let step = UpcastStep(
          index: i, commit: c, events: input, stage: stage, source: SourceGraph(projector: projector),
          associations: associations[i], destination: destinations[i],
          identities: counters[i])
        defer { step.close() }
        try step.applySourceEvents()
        try migrate(step)
        input = step.output
        if stage.isFinal, let written = step.written {
          counts.commitsWritten += 1
          counts.eventsWritten += Int(written.lastSequence - written.firstSequence + 1)
        }
      }
      counts.commitsRead += 1
      counts.eventsRead += c.events.count
      last = c.lastSequence
    }
    try sourceProjector.writeObjects()
    try txn.put(meta, key: keys.checkpoint, value: BigEndianKey(last))
    for (i, counter) in counters.enumerated() {
      try txn.put(meta, key: keys.nextID(stage: i, of: stages.count), value: BigEndianKey(counter.next))
    }
    var requested = try txn.contains(meta, key: keys.switchRequest)
    if requested && !Self.requesterWaits(store.path) {
      // Its asker died while it waited: nobody wants the switch now.
      try txn.delete(meta, key: keys.switchRequest)
      requested = false
    }
    let switchNow = done && (switching || requested)
    if switchNow { try finish(txn, sourceEnd: last) }
    counts.finished = switchNow
    counts.caughtUp = done
    return counts
  }

  /// The atomic switch: the destination version becomes the store's, in the last batch's
  /// transaction; the scratch state goes, the source log stays for a rollback.
  private func finish(_ txn: WriteHandle, sourceEnd: UInt64) throws {
    let meta = sourceDBs.meta
    try txn.setActiveVersion(destinationModel.version, in: meta)
    try txn.put(meta, key: keys.from, value: String(store.model.version))
    try txn.put(meta, key: keys.sourceEnd, value: BigEndianKey(sourceEnd))
    let output = stages[stages.count - 1]
    let destinationEnd = try GraphReader(txn: txn, dbs: output.output, model: output.destinationModel).logEnd()
    try txn.put(meta, key: keys.destinationEnd, value: BigEndianKey(destinationEnd.sequence))
    for k in [keys.checkpoint, keys.fingerprint, keys.base, keys.switchRequest, MetaKey.upcastBuilder] {
      try txn.delete(meta, key: k)
    }
    for i in stages.indices { try txn.delete(meta, key: keys.nextID(stage: i, of: stages.count)) }
    for (_, db) in stages[0].source.projections { try txn.empty(db) }
    for stage in stages {
      if !stage.isFinal {
        for (_, db) in stage.output.projections { try txn.empty(db) }
        try txn.empty(stage.output.log)
      }
      try txn.empty(stage.forward)
      try txn.empty(stage.reverse)
    }
  }

  /// Live destination objects per entity, in the model's order.
  public func objectsPerEntity() throws -> [(entity: String, count: Int)] {
    let entities = stages[stages.count - 1].output.entities
    let model = destinationModel
    return try store.readStorage { txn in
      try model.entities.map { e in
        var n = 0
        let prefix = StoreKey.entityPrefix(e.id)
        try txn.forEach(entities, from: prefix) { k, _ in
          guard KeyField.hasPrefix(k, prefix) else { return false }
          n += 1
          return true
        }
        return (e.name, n)
      }
    }
  }
}

/// Why an upcast's storage refused; the migration module reports it as its own error, with
/// the same message.
public struct VersionBuildError: RemediedError {
  /// What is wrong, as the migration module reports it.
  public let problem: String
  /// What a user can do, if anything.
  public let remedy: Remedy?
  init(_ problem: String, remedy: Remedy? = nil) {
    self.problem = problem
    self.remedy = remedy
  }
}

/// Source objects were made, while the upcast was under way, with identities the
/// destination may already have given to objects of its own: the upcast starts over.
struct SourceIdentitiesOverlap: Error {}

/// The next identity an upcast gives a destination object that keeps no source's.
final class IdentityCounter {
  var next: UInt64
  init(next: UInt64) { self.next = next }
}

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
  /// The next identity step `i` of a chain of `count` gives (the last step's is ``nextID``).
  func nextID(stage i: Int, of count: Int) -> String { i == count - 1 ? nextID : stagePrefix(i) + "nextID" }
  /// The first identity the destination could give a new object: one past the source's
  /// last identity when the upcast started.
  var base: String { prefix + "base" }
  /// Set at the switch: the version the destination was made from, and that log's end then.
  var from: String { prefix + "from" }
  var sourceEnd: String { prefix + "sourceEnd" }
  /// Set at the switch: the destination log's last sequence then, the position there that
  /// corresponds to ``sourceEnd`` (a follower of the log continues after it).
  var destinationEnd: String { prefix + "destinationEnd" }
  /// Present while a switch to the version is asked of its following upcast.
  var switchRequest: String { prefix + "switchRequested" }
}

extension VersionBuild {
  /// Switches `store` back to the version it was upcast from (or, with `version`, to any
  /// version whose log is current: forward again after a rollback, as long as the older log
  /// has not moved on since).
  ///
  /// - Returns: the version now active.
  public static func rollback(_ store: EventStore, to version: Int?) throws -> Int {
    let active = store.model.version
    let path = store.path
    let meta = store.dbs.meta
    return try store.commits.run { batch, _ in
      let txn = batch.handle  // shared by the local functions below
      func text(_ key: String) throws -> String? {
        try txn.get(meta, key: key).map { String(decoding: $0, as: UTF8.self) }
      }
      func end(of v: Int) throws -> UInt64 {
        guard let log = try txn.openDatabase(StoreDatabases.name("log", version: v), create: false) else { return 0 }
        return try txn.withCursor(log) { c in
          guard try c.last() else { return 0 }
          return try c.withCurrent { k, v in
            try CommitCodec.decode(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)").lastSequence
          }
        }
      }
      let target: Int
      if let version {
        target = version
      } else {
        guard let from = try text(UpcastKeys(version: active).from).flatMap(Int.init) else {
          throw VersionBuildError("version \(active) was not made by an upcast: there is nothing to roll back to")
        }
        target = from
      }
      guard target != active else { throw VersionBuildError("\(path) is already at version \(target)") }
      guard target >= 1, try txn.get(store.dbs.models, key: BigEndianKey(UInt64(target))) != nil,
        try txn.openDatabase(StoreDatabases.name("log", version: target), create: false) != nil
      else { throw VersionBuildError("\(path) has no version \(target)") }
      if let m = try store.dbs.storedModel(target, txn, path: path) { try store.dbs.checkModelHash(m, txn, path: path) }
      // Forward to an upcast's result only if its source log has not moved on since.
      let keys = UpcastKeys(version: target)
      if let from = try text(keys.from).flatMap(Int.init), from == active {
        let recorded = try txn.get(meta, key: keys.sourceEnd).flatMap { BigEndianKey.decode($0) }
        let now = try end(of: active)
        guard recorded == now else {
          throw VersionBuildError(
            "version \(target) is stale: version \(active)'s log has moved on to sequence \(now) since it was made; upcast again"
          )
        }
      }
      if try txn.contains(meta, key: keys.checkpoint) {
        throw VersionBuildError("an upcast to version \(target) is unfinished: run it again to finish it")
      }
      try txn.setActiveVersion(target, in: meta)
      return target
    }
  }
}
