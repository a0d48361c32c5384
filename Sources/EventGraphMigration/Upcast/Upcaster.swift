import EventGraph
import Foundation

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
  /// One step of a chain (v1→v2, v2→v3, …): its mapping and what each entity mapping reads.
  ///
  /// Only the last step writes a log; the others keep their output as scratch projections
  /// that the next step reads, so an intermediate version is never a log
  /// (``VersionBuild`` keeps them).
  struct Stage {
    let mapping: CompiledMapping
    /// What each entity mapping reads, by mapping index.
    let inputs: [MappingInputs]
  }

  let store: EventStore
  let stages: [Stage]
  /// The databases and checkpoint the upcast writes through.
  let build: VersionBuild
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

  /// The store's builder lock, held while this upcaster lives (one upcast builds a store
  /// at a time); `nil` for the upcasters tests make directly.
  private var builderLock: AnyObject?

  /// The upcaster of `store` through `models`, each step's mapping placed by its source
  /// version (inferred where none is given), holding the store's builder lock.
  convenience init(
    store: EventStore, through models: [Model], mappings: [MappingModel], policies: PolicyRegistry,
    mappingFiles: [String], modelFiles: [String], batchEvents: Int?, discardingNewerCommits: Bool
  ) throws {
    let lock = try Self.storage { try VersionBuild.lockBuilder(store) }
    guard let model = models.last else { throw MigrationError("an upcast needs a destination model") }
    if store.model.version == model.version {
      throw MigrationError("\(store.path) is already at version \(model.version)")
    }
    var chain: [CompiledMapping] = []
    var from = store.model
    for (step, next) in models.enumerated() {
      let index = mappings.firstIndex { $0.source == from.version }
      let file =
        index.flatMap { $0 < mappingFiles.count ? mappingFiles[$0] : nil }
        ?? "inferred mapping v\(from.version)-v\(next.version)"
        + (step < modelFiles.count ? " to \(modelFiles[step])" : "")
      chain.append(
        try CompiledMapping(index.map { mappings[$0] }, from: from, to: next, policies: policies, file: file))
      from = next
    }
    for (i, m) in mappings.enumerated() where !chain.contains(where: { $0.sourceModel.version == m.source }) {
      throw MappingError(
        file: i < mappingFiles.count ? mappingFiles[i] : "mapping", location: "source",
        message: "the mapping starts at version \(m.source), which is not a step of this upcast")
    }
    try self.init(store: store, chain: chain)
    builderLock = lock
    if let batchEvents { self.batchEvents = max(1, batchEvents) }
    discardsNewerCommits = discardingNewerCommits
  }

  init(store: EventStore, chain: [CompiledMapping]) throws {
    guard let firstStep = chain.first else { throw MigrationError("an upcast needs a mapping") }
    self.store = store
    guard store.model.version == firstStep.sourceModel.version else {
      throw MigrationError(
        "the store is at version \(store.model.version), the mapping starts at \(firstStep.sourceModel.version)")
    }
    for (a, b) in zip(chain, chain.dropFirst()) where a.destinationModel.version != b.sourceModel.version {
      throw MigrationError(
        "the chain is broken: a step ends at version \(a.destinationModel.version), the next starts at \(b.sourceModel.version)"
      )
    }
    self.stages = chain.map { Stage(mapping: $0, inputs: MappingInputs.of($0)) }
    self.build = try Self.storage {
      try VersionBuild(
        store: store, steps: chain.map { ($0.destinationModel, $0.mappings.contains { $0.policy != nil }) })
    }
  }

  /// Runs `body`, reporting the storage's refusals as this module's errors, with the same message.
  static func storage<R>(_ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let e as VersionBuildError {
      throw MigrationError(e.problem, remedy: e.remedy)
    }
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
    return VersionBuild.fingerprint(parts.joined(separator: "\n"))
  }

  // MARK: - Running

  func run(progress: (Int) -> Void = { _ in }) throws -> UpcastReport {
    try Self.storage { try runBatches(progress: progress) }
  }

  private func runBatches(progress: (Int) -> Void) throws -> UpcastReport {
    let start = ContinuousClock.now
    var report = freshReport()
    report.resumed = try prepare()
    var batches = 0
    while true {
      if let stop = stopAfterBatches, batches >= stop { break }
      let batch = try build.runBatch(maxEvents: batchEvents) { step in try migrate(step) }
      if batch.restarted {
        // The upcast started over (source objects were made meanwhile): counted afresh.
        report = freshReport()
        continue
      }
      batches += 1
      report.commitsRead += batch.commitsRead
      report.eventsRead += batch.eventsRead
      report.commitsWritten += batch.commitsWritten
      report.eventsWritten += batch.eventsWritten
      progress(report.eventsRead)
      if batch.finished {
        report.switched = true
        break
      }
    }
    report.objectsPerEntity = try build.objectsPerEntity()
    report.seconds =
      Double((ContinuousClock.now - start).components.attoseconds) / 1e18
      + Double((ContinuousClock.now - start).components.seconds)
    return report
  }

  /// A report of nothing done yet, naming the versions.
  func freshReport() -> UpcastReport {
    var report = UpcastReport()
    report.sourceVersion = first.sourceModel.version
    report.destinationVersion = last.destinationModel.version
    return report
  }

  /// Starts afresh, or finds the checkpoint of an interrupted run.
  ///
  /// Returns whether it resumes.
  private func prepare() throws -> Bool {
    try build.start(fingerprint: fingerprint, discardingNewerCommits: discardsNewerCommits)
  }
}
