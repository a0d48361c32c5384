extension EventStore {
  /// Maintains `projection` inline: from now on every commit of this process (through
  /// ``commit(expecting:idempotencyKey:metadata:_:)`` or ``write(metadata:_:)``) applies it
  /// in the commit's own transaction, so it is current whenever a commit has returned, and a
  /// projection that throws refuses the commit.
  ///
  /// The projection first catches up with the log, in batches. Register it in every process
  /// that writes the store: a commit made by a process that has not registered it is caught
  /// up by the next commit of one that has.
  ///
  /// - Throws: ``ServiceError`` `projectionAlreadyRegistered`,
  /// ``ServiceError`` `invalidName`,
  ///   ``ErrorCode/readOnly``, or what the projection throws during the catch-up.
  public func register(_ projection: any Projection) throws {
    let p = try open(projection)
    _ = try catchUp(p, progress: { _ in })
    try service.projections.add(p)
  }

  /// Maintains `projection` asynchronously, until the task is cancelled.
  ///
  /// It applies new commits in batches, each batch in one transaction with the projection's
  /// position. Run it in
  /// a task of its own; start it again after a restart and it continues from its position.
  ///
  /// ```swift
  /// let indexer = Task { try await store.maintain(SearchIndex()) }
  /// …
  /// indexer.cancel()
  /// ```
  ///
  /// - Throws: `CancellationError` when the task is cancelled (the only way it returns), or
  ///   what the projection throws (the batch is then not applied).
  public func maintain(_ projection: any Projection) async throws {
    let p = try open(projection)
    let (dbs, model) = (self.dbs, self.model)
    while true {
      try Task.checkCancellation()
      let generation = service.notifier.generation
      let (position, end) = try readStorageHandle { txn in
        (
          try StoreService.position(p.positionKey, in: p.consumers, txn),
          try GraphReader(txn: txn, dbs: dbs, model: model).logEnd().sequence
        )
      }
      if position < end {
        try await service.sideWrite { txn in
          try ProjectionRunner.catchUp(p, in: txn, dbs: dbs, model: model, maxEvents: 20_000)
        }
      } else {
        try await service.notifier.wait(after: generation)
      }
    }
  }

  /// Empties `projection`'s database and replays the whole log into it.
  ///
  /// It replays in batches of commits. The position moves with each batch, so a rebuild
  /// that is interrupted is a projection that is behind, and carries on from there.
  ///
  /// - Returns: the commits and events applied.
  @discardableResult
  public func rebuild(projection: any Projection, progress: (Int) -> Void = { _ in }) throws -> (
    commits: Int, events: Int
  ) {
    let p = try open(projection)
    try writeStorage { txn in
      try txn.empty(p.db)
      try txn.delete(p.consumers, key: p.positionKey)
    }
    return try catchUp(p, progress: progress)
  }

  /// Reads a projection's database in a snapshot, with its position.
  ///
  /// A projection that was never built reads as empty, at position 0.
  public func readProjection<R>(_ name: String, _ body: (ProjectionView) throws -> R) throws -> R {
    try ServiceError.checkName(name)
    let db = try service.database(ProjectionRunner.databaseName(name, version: model.version), create: false)
    let consumers = try service.consumers()
    return try readStorageHandle { txn in
      let view = ProjectionView(
        txn: txn, db: db,
        position: try StoreService.position(ProjectionRunner.positionKey(name), in: consumers, txn),
        logEnd: try GraphReader(txn: txn, dbs: dbs, model: model).logEnd().sequence)
      return try body(view)
    }
  }

  /// The names of the projections maintained inline by this store object.
  public var registeredProjections: [String] { service.projections.names }

  // MARK: - Helpers

  private func open(_ projection: any Projection) throws -> OpenProjection {
    try ServiceError.checkName(projection.name)
    if options.readOnly { throw StoreError.readOnly(path: path) }
    guard let consumers = try service.consumers(),
      let db = try service.database(
        ProjectionRunner.databaseName(projection.name, version: model.version), create: true)
    else {
      throw StoreError.corrupt("cannot create the databases of projection '\(projection.name)'")
    }
    return OpenProjection(projection: projection, db: db, consumers: consumers)
  }

  /// Applies the log to `p` in batches of write transactions until it is current.
  private func catchUp(_ p: OpenProjection, progress: (Int) -> Void) throws -> (commits: Int, events: Int) {
    var total = (commits: 0, events: 0)
    while true {
      let (dbs, model) = (self.dbs, self.model)
      let step = try commits.run { batch, _ in
        try ProjectionRunner.catchUp(p, in: batch.handle, dbs: dbs, model: model, maxEvents: Replay.batchEvents)
      }
      total.commits += step.commits
      total.events += step.events
      progress(total.events)
      if step.atEnd || step.commits == 0 { return total }
    }
  }
}
