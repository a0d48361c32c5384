import EventGraph
import Foundation

extension EventStore {
  /// Upcasts the store at `path` to `model`: replays its log through `mapping` (inferred
  /// when `nil`) into a log of the new version, then makes that version active in one
  /// atomic step.
  ///
  /// The old log stays, so ``rollback(at:to:)`` can switch back.
  ///
  /// An interrupted upcast (a crash, a kill) resumes from its last checkpoint when run again
  /// with the same mapping, and ends with the same bytes as an uninterrupted one.
  ///
  /// ```swift
  /// let v2 = try Model(contentsOf: "AddressBook.v2.model.json")
  /// let mapping = try MappingModel(contentsOf: "AddressBook.v1-v2.mapping.json")
  /// let report = try EventStore.upcast(at: "book.store", to: v2, mapping: mapping)
  /// ```
  ///
  /// - Parameters:
  ///   - path: the store's directory.
  ///   - model: the destination model.
  ///   - mapping: the mapping from the store's active version to `model`; `nil` to infer it.
  ///   - policies: the Swift migration policies the mapping names.
  ///   - mappingFile: the file `mapping` was read from, for errors.
  ///   - dryRun: migrate a copy in a temporary directory and leave the store untouched;
  ///     the report then comes with a sample of the result.
  ///   - batchEvents: source events per LMDB transaction (and checkpoint); 10,000 by default.
  ///   - discardingNewerCommits: upcast again even though the destination version has
  ///     commits of its own (written after an earlier upcast, then rolled back): they are
  ///     lost. Without it such an upcast is refused.
  ///   - options: how the store is opened: its key-encryption key for a store of personal
  ///     data (`StoreOptions.keyFile`), whose upcast writes sealed values.
  ///   - progress: called with the number of source events read so far.
  /// - Throws: ``MappingError`` (before anything is written), ``MigrationError`` naming the
  ///   source commit, mapping and object, or the store's errors. The store stays usable at
  ///   its old version.
  public static func upcast(
    at path: String, to model: Model, mapping: MappingModel?, policies: PolicyRegistry = .init(),
    mappingFile: String = "mapping", dryRun: Bool = false, batchEvents: Int? = nil,
    discardingNewerCommits: Bool = false, options: StoreOptions = .init(),
    progress: (Int) -> Void = { _ in }
  ) throws -> (report: UpcastReport, sample: [String]) {
    try upcast(
      at: path, through: [model], mappings: mapping.map { [$0] } ?? [], policies: policies,
      mappingFiles: [mappingFile], dryRun: dryRun, batchEvents: batchEvents,
      discardingNewerCommits: discardingNewerCommits, options: options, progress: progress)
  }

  /// Upcasts through several versions in one streaming pass (v1 → v2 → v3, as Core Data's
  /// staged migration): each step's output is the next step's source, kept as scratch
  /// projections; only the last version gets a log.
  ///
  /// - Parameters:
  ///   - path: the store's directory.
  ///   - models: the versions to go through, in order; the last is the destination.
  ///   - mappings: the written mappings, placed by their `source` version; a step with none
  ///     is inferred.
  ///   - policies: the Swift migration policies the mappings name.
  ///   - mappingFiles: the files `mappings` were read from, in the same order, for errors.
  ///   - modelFiles: the files `models` were read from, in the same order: an inferred
  ///     step's errors name the file of its destination model.
  ///   - dryRun: migrate a copy in a temporary directory and leave the store untouched;
  ///     the report then comes with a sample of the result.
  ///   - batchEvents: source events per LMDB transaction (and checkpoint); 10,000 by default.
  ///   - discardingNewerCommits: upcast again even though the destination version has
  ///     commits of its own (written after an earlier upcast, then rolled back): they are
  ///     lost. Without it such an upcast is refused.
  ///   - options: how the store is opened (its key-encryption key, for personal data).
  ///   - progress: called with the number of source events read so far.
  public static func upcast(
    at path: String, through models: [Model], mappings: [MappingModel], policies: PolicyRegistry = .init(),
    mappingFiles: [String] = [], modelFiles: [String] = [], dryRun: Bool = false, batchEvents: Int? = nil,
    discardingNewerCommits: Bool = false, options: StoreOptions = .init(), progress: (Int) -> Void = { _ in }
  ) throws -> (report: UpcastReport, sample: [String]) {
    guard let model = models.last else { throw MigrationError("an upcast needs a destination model") }
    if dryRun {
      let copy = FileManager.default.temporaryDirectory.appendingPathComponent(
        "eventgraph-dry-run-\(UUID().uuidString)"
      ).path
      try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: copy) }
      var reading = options
      reading.readOnly = true
      try EventStore(path: path, options: reading).copy(to: copy)
      let (report, _) = try upcast(
        at: copy, through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles,
        modelFiles: modelFiles, batchEvents: batchEvents, discardingNewerCommits: discardingNewerCommits,
        options: options, progress: progress)
      var sample: [String] = []
      let migrated = try EventStore(path: copy, options: reading)
      for e in model.entities {
        var n = 0
        try migrated.export(entity: e.name) { line in
          if n < 3 && !sample.contains(line) { sample.append(line) }
          n += 1
        }
      }
      return (report, sample)
    }
    let upcaster = try Upcaster(
      store: try EventStore(path: path, options: options), through: models, mappings: mappings, policies: policies,
      mappingFiles: mappingFiles, modelFiles: modelFiles, batchEvents: batchEvents,
      discardingNewerCommits: discardingNewerCommits)
    return (try upcaster.run(progress: progress), [])
  }

  /// Switches the store back to the version it was upcast from (or, with `version`, to
  /// any version whose log is current: forward again after a rollback, as long as the
  /// older log has not moved on since).
  ///
  /// - Returns: the version now active.
  @discardableResult
  public static func rollback(at path: String, to version: Int? = nil) throws -> Int {
    let store = try EventStore(path: path)
    return try Upcaster.storage { try VersionBuild.rollback(store, to: version) }
  }
}
