import EventGraph

/// Custom migration code for an entity mapping: the seven stages of Core Data's
/// `NSEntityMigrationPolicy`, each with a default that does what the mapping says.
///
/// During a streaming upcast the stages run once per source commit, stage by stage across
/// the mappings in file order (Docs/migration.md, "When each stage runs"):
/// ``begin(_:manager:)`` for every mapping, then ``createDestinationInstances(for:mapping:manager:)``
/// for every source object the commit touched (and its neighbours as far as the mapping's
/// expressions reach), ``endInstanceCreation(_:manager:)``, ``createRelationships(for:mapping:manager:)``
/// for the destination objects of those sources, ``endRelationshipCreation(_:manager:)``,
/// ``performCustomValidation(_:manager:)``, and ``end(_:manager:)``.
///
/// The seed's phone split, as a policy:
///
/// ```swift
/// struct AddressBookToPhoneBook: MigrationPolicy {
///   func createDestinationInstances(for source: SourceObject, mapping: CompiledEntityMapping,
///                                   manager: MigrationManager) throws {
///     for (attribute, type) in [("phone1", 1), ("phone2", 2)] {
///       guard let number = try manager.value(of: source, attribute)?.stringValue, !number.isEmpty else { continue }
///       let phone = try manager.insertDestination("PhoneBook", key: attribute)
///       try manager.set(phone, "phoneNumber", .string(number))
///       try manager.set(phone, "type", .int16(Int16(type)))
///       manager.associate(source: source, destination: phone, mapping: mapping)
///     }
///   }
/// }
/// ```
public protocol MigrationPolicy: Sendable {
  /// A version of the policy's code: change it when you fix the policy, so that an
  /// interrupted upcast starts over instead of resuming with the old code's output.
  var version: String { get }
  func begin(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws
  /// Makes the destination objects of one source object with ``MigrationManager/insertDestination(_:key:)``.
  func createDestinationInstances(for source: SourceObject, mapping: CompiledEntityMapping, manager: MigrationManager)
    throws
  func endInstanceCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws
  /// Sets the relationships of one destination object.
  func createRelationships(for destination: ObjectID, mapping: CompiledEntityMapping, manager: MigrationManager) throws
  func endRelationshipCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws
  func performCustomValidation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws
  func end(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws
}

extension MigrationPolicy {
  public var version: String { "1" }

  public func begin(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {}

  public func createDestinationInstances(
    for source: SourceObject, mapping: CompiledEntityMapping, manager: MigrationManager
  ) throws {
    try manager.createDefaultDestinationInstances(for: source, mapping: mapping)
  }

  public func endInstanceCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {}

  public func createRelationships(for destination: ObjectID, mapping: CompiledEntityMapping, manager: MigrationManager)
    throws
  {
    try manager.createDefaultRelationships(for: destination, mapping: mapping)
  }

  public func endRelationshipCreation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {}
  public func performCustomValidation(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {}
  public func end(_ mapping: CompiledEntityMapping, manager: MigrationManager) throws {}
}

/// The policy of mappings that name none: everything by default.
struct DefaultPolicy: MigrationPolicy {}

/// Swift migration policies by name, as a mapping file's `"policy": NAME` refers to them.
public struct PolicyRegistry: Sendable {
  private var policies: [String: any MigrationPolicy] = [:]
  private var acceptsAnyName = false

  public init(_ policies: [String: any MigrationPolicy] = [:]) { self.policies = policies }

  /// A registry that accepts every policy name (with default behaviour): for checking and
  /// drawing a mapping without running it.
  public static var permissive: PolicyRegistry {
    var r = PolicyRegistry()
    r.acceptsAnyName = true
    return r
  }

  public mutating func register(_ policy: any MigrationPolicy, as name: String) { policies[name] = policy }

  public func policy(named name: String) -> (any MigrationPolicy)? {
    policies[name] ?? (acceptsAnyName ? DefaultPolicy() : nil)
  }
  public var names: [String] { policies.keys.sorted() }
  public var isEmpty: Bool { policies.isEmpty }
}

/// A source object as a policy sees it: its identity and entity in the source model.
public struct SourceObject: Sendable, Hashable {
  public let id: ObjectID
  public let entity: EntityID
}

/// A destination object being made by ``MigrationPolicy/createDestinationInstances(for:mapping:manager:)``.
public struct DestinationDraft: Sendable, Hashable {
  let index: Int
}

/// A policy's failure, or a failure inside a stage, with the mapping and object named.
public struct MigrationError: RemediedError, Sendable, Hashable {
  /// What is wrong, without the remedy.
  public var message: String
  /// What a user can do, if anything.
  public var remedy: Remedy?
  public init(_ message: String, remedy: Remedy? = nil) {
    self.message = message
    self.remedy = remedy
  }
  public var problem: String { message }
}
