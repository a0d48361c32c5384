import EventGraph

/// How the objects of one model version become the objects of the next: a list of entity
/// mappings, as Core Data's mapping model (FORMATS.md, "Mapping file").
///
/// Entities that no mapping names are mapped by inference (same name or
/// `renamingIdentifier`), the way a lightweight migration does; see ``CompiledMapping``.
public struct MappingModel: Sendable, Hashable {
  /// The source model version.
  public var source: Int
  /// The destination model version.
  public var destination: Int
  public var entityMappings: [EntityMapping]

  public init(source: Int, destination: Int, entityMappings: [EntityMapping] = []) {
    self.source = source
    self.destination = destination
    self.entityMappings = entityMappings
  }
}

/// One entity mapping: which source objects make which destination objects, and how.
public struct EntityMapping: Sendable, Hashable {
  public var name: String
  /// The source entity; `nil` for an *add* mapping (it makes nothing by itself).
  public var source: String?
  /// The destination entity; `nil` for a *remove* mapping.
  public var destination: String?
  /// A predicate over the source object: only objects for which it holds are mapped.
  public var filter: String?
  /// Destination attribute → value expression (`$source.phone1`, `'2'`, `uppercase(name)`).
  public var attributes: [String: String]
  /// Destination relationship → the objects another mapping made from `sources`.
  public var relationships: [String: RelationshipMapping]
  /// A declarative split: each entry whose `when` holds makes one destination object.
  public var instances: [InstanceMapping]
  /// The name of a Swift ``MigrationPolicy`` registered with the upcaster.
  public var policy: String?

  public init(
    name: String, source: String?, destination: String?, filter: String? = nil, attributes: [String: String] = [:],
    relationships: [String: RelationshipMapping] = [:], instances: [InstanceMapping] = [], policy: String? = nil
  ) {
    self.name = name
    self.source = source
    self.destination = destination
    self.filter = filter
    self.attributes = attributes
    self.relationships = relationships
    self.instances = instances
    self.policy = policy
  }

  /// What kind of mapping this is, as Core Data names them.
  public var kind: Kind {
    if source == nil { return .add }
    if destination == nil { return .remove }
    if policy != nil { return .custom }
    if !instances.isEmpty || filter != nil || !attributes.isEmpty || !relationships.isEmpty { return .transform }
    return .copy
  }

  public enum Kind: String, Sendable, Hashable { case add, remove, copy, transform, custom }
}

/// `{"mapping": NAME, "sources": EXPRESSION}`: the destination objects that mapping NAME
/// made from the source objects the expression yields.
public struct RelationshipMapping: Sendable, Hashable {
  public var mapping: String
  public var sources: String

  public init(mapping: String, sources: String) {
    self.mapping = mapping
    self.sources = sources
  }
}

/// One entry of a declarative split.
public struct InstanceMapping: Sendable, Hashable {
  /// The entry's stable name: the same source always maps this entry to the same object.
  public var key: String
  /// When the entry makes an object (absent: always).
  public var when: String?
  public var attributes: [String: String]

  public init(key: String, when: String? = nil, attributes: [String: String] = [:]) {
    self.key = key
    self.when = when
    self.attributes = attributes
  }
}

/// A mapping that cannot be used, naming the file, mapping and property at fault.
public struct MappingError: RemediedError, Sendable, Hashable {
  /// The mapping file, or "mapping" for one built in Swift.
  public var file: String
  /// Where in it: "AddressBookToPhoneBook.attributes.phoneNumber".
  public var location: String
  public var message: String
  /// What a user can do, if anything.
  public var remedy: Remedy?

  public init(file: String = "mapping", location: String, message: String, remedy: Remedy? = nil) {
    self.file = file
    self.location = location
    self.message = message
    self.remedy = remedy
  }

  public var problem: String {
    location.isEmpty ? "\(file): \(message)" : "\(file): \(location): \(message)"
  }
}
