/// An event with the entity and the property it is about, as the model version of its
/// commit names them.
///
/// An ``Event`` holds identifiers only: a ``PropertyID`` is numbered within its entity
/// (`Customer.orders` and `OrderLine.product` may both be 3), and an object's entity is
/// not in a `.set` or a `.link`. A consumer that compares a property's id alone catches
/// other entities' properties too; one that reads the names here cannot.
///
/// ```swift
/// for change in try storage.describe(commit) {
///   guard change.entity.name == "PhoneBook", change.property?.name == "phoneNumber",
///     case .set(let phone, _, .string(let number)?) = change.event
///   else { continue }
///   try storage.put(Array(number.utf8), key(phone))
/// }
/// ```
public struct DescribedEvent: Sendable, Hashable {
  /// The event as the log holds it.
  public let event: Event
  /// The entity of the event's object (for an insert, the one it is made of).
  public let entity: Entity
  /// The attribute of a `.set`, the relationship of a `.link` or `.unlink`; `nil` for the
  /// other kinds.
  public let property: Property?

  /// The object the event is about.
  public var object: ObjectID { event.object }
}

extension GraphReader {
  /// The commit's events with their entities and properties, read against this reader's
  /// version (the commit's own): the objects it inserts from its events, the others from
  /// the identities, which keep a deleted object's entity.
  func describe(_ commit: Commit) throws -> [DescribedEvent] {
    var made: [ObjectID: EntityID] = [:]
    var described: [DescribedEvent] = []
    described.reserveCapacity(commit.events.count)
    for event in commit.events {
      let o = event.object
      if case .insert(_, let e) = event { made[o] = e }
      guard let id = try made[o] ?? entity(of: o), let entity = model.entity(id) else {
        throw StoreError.corrupt("commit \(commit.number) names #\(o.rawValue), whose entity the store does not know")
      }
      let property: Property? =
        switch event {
        case .set(_, let p, _), .link(_, let p, _, _), .unlink(_, let p, _): entity.property(p)
        default: nil
        }
      described.append(DescribedEvent(event: event, entity: entity, property: property))
    }
    return described
  }
}

extension ProjectionStorage {
  /// The commit's events with the entity and property each is about
  /// (``DescribedEvent``), in the model the projection applies commits of.
  public func describe(_ commit: Commit) throws -> [DescribedEvent] {
    try GraphReader(txn: txn, dbs: dbs, model: model).describe(commit)
  }
}

extension EventStore {
  /// The commit's events with the entity and property each is about
  /// (``DescribedEvent``), named by the model version the commit was written in — so a
  /// consumer that reads on across a version switch sees each commit's own names.
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion`` when the commit's version is no longer in
  ///   the store (compacted away).
  public func describe(_ commit: Commit) throws -> [DescribedEvent] {
    try read(version: commit.modelVersion) { try $0.reader.describe(commit) }
  }
}
