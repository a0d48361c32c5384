import EventGraph
import Foundation

extension EventStore {
  /// A following upcast: builds `models.last` from the store's log while the store keeps
  /// taking commits, keeps it caught up commit by commit, and switches the store to it
  /// when `control` or ``requestSwitch(at:to:)`` asks, in one write transaction with the
  /// last catch-up (Docs/migration.md).
  ///
  /// It is the one-shot upcast resumed again and again: a killed following upcast resumes
  /// from its checkpoint when run again, and the new version's log ends byte for byte as a
  /// one-shot upcast of the final source log would make it. One upcast builds a store at a
  /// time: another is refused while this one runs.
  ///
  /// ```swift
  /// let report = try EventStore.followingUpcast(
  ///   at: "book.store", through: [v2], mappings: [mapping],
  ///   control: FollowControl(switchWhenCaughtUp: true))
  /// ```
  ///
  /// - Parameters:
  ///   - path: the store's directory.
  ///   - models: the versions to go through, in order; the last is the destination.
  ///   - mappings: the written mappings, placed by their `source` version; a step with none
  ///     is inferred.
  ///   - policies: the Swift migration policies the mappings name.
  ///   - mappingFiles: the files `mappings` were read from, in the same order, for errors.
  ///   - modelFiles: the files `models` were read from, in the same order, for errors.
  ///   - batchEvents: source events per LMDB transaction (and checkpoint); 10,000 by default.
  ///   - discardingNewerCommits: start again even though the destination version has
  ///     commits of its own (written after an earlier upcast, then rolled back): they are
  ///     lost.
  ///   - options: how the store is opened (its key-encryption key, for personal data).
  ///   - control: when to switch the store to the new version, and when to stop.
  /// - Throws: ``MigrationError`` (another upcast building the store, a refused resume),
  ///   ``MappingError``, the store's errors.
  public static func followingUpcast(
    at path: String, through models: [Model], mappings: [MappingModel], policies: PolicyRegistry = .init(),
    mappingFiles: [String] = [], modelFiles: [String] = [], batchEvents: Int? = nil,
    discardingNewerCommits: Bool = false, options: StoreOptions = .init(), control: FollowControl = .init()
  ) throws -> UpcastReport {
    try EventStore(path: path, options: options).followingUpcast(
      through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles, modelFiles: modelFiles,
      batchEvents: batchEvents, discardingNewerCommits: discardingNewerCommits, control: control)
  }

  /// ``followingUpcast(at:through:mappings:policies:mappingFiles:modelFiles:batchEvents:discardingNewerCommits:options:control:)``
  /// on this handle: a service runs it on a thread of its own beside its commits (LMDB's
  /// writer lock takes turns between its batches and the service's).
  public func followingUpcast(
    through models: [Model], mappings: [MappingModel], policies: PolicyRegistry = .init(),
    mappingFiles: [String] = [], modelFiles: [String] = [], batchEvents: Int? = nil,
    discardingNewerCommits: Bool = false, control: FollowControl = .init()
  ) throws -> UpcastReport {
    let upcaster = try Upcaster(
      store: self, through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles,
      modelFiles: modelFiles, batchEvents: batchEvents, discardingNewerCommits: discardingNewerCommits)
    return try upcaster.follow(control)
  }

  /// Asks the following upcast that builds `version` of the store at `path` to switch the
  /// store to it, and waits until it has: it catches up with the last source commits and
  /// switches in one write transaction, so no commit is lost or applied twice.
  ///
  /// - Throws: ``MigrationError`` when the store is at `version` already, has no such
  ///   version, no following upcast runs to build it, or the upcast stopped before it
  ///   switched; the store is unchanged then.
  public static func requestSwitch(at path: String, to version: Int) throws {
    try EventStore(path: path, options: StoreOptions(checkPages: false)).requestSwitch(to: version)
  }

  /// ``requestSwitch(at:to:)`` through this handle.
  public func requestSwitch(to version: Int) throws {
    let waiting = try Upcaster.storage { try VersionBuild.requestSwitch(self, to: version) }
    defer { withExtendedLifetime(waiting) {} }
    let changes = StoreChangeWaiter(self)
    while try activeVersion() != version {
      guard VersionBuild.builderRuns(path) else {
        // The builder may have switched just before it ended.
        if try activeVersion() == version { return }
        try Upcaster.storage { try VersionBuild.withdrawSwitch(self, to: version) }
        throw MigrationError(
          "the following upcast building version \(version) of \(path) stopped before it switched; the store stays at version \(try activeVersion())"
        )
      }
      changes.wait(milliseconds: 100)
    }
  }
}
