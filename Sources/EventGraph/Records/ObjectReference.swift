/// Anything that names one object: an ``ObjectID``, a typed ``Ref``, or a ``Stored`` record.
///
/// The operations on one object take any of them, so that a record read from the store
/// is passed back as it is: `store.clone(root: stored)`, `tx.delete(order.id)`,
/// `snapshot.version(of: customer)`; ``Expectation/unchanged(_:)`` expects a record's version.
public protocol ObjectReference {
  /// The identity of the object named.
  var objectID: ObjectID { get }
}

extension ObjectID: ObjectReference {
  /// The identity itself.
  public var objectID: ObjectID { self }
}

extension Ref: ObjectReference {
  /// The identity the reference holds.
  public var objectID: ObjectID { id }
}

extension Stored: ObjectReference {
  /// The identity of the record's object.
  public var objectID: ObjectID { id.id }

  /// The object's identity as a typed reference: the value a relationship to it holds.
  public var ref: Ref<R> { id }
}

extension Expectation {
  /// The record's object must be unchanged since it was read: at the record's version.
  ///
  /// ```swift
  /// let order = try #require(try store.record(ref))
  /// try await store.commit(expecting: [.unchanged(order)]) { tx in … }
  /// ```
  public static func unchanged<R>(_ stored: Stored<R>) -> Expectation {
    .object(stored.objectID, version: stored.version)
  }
}
