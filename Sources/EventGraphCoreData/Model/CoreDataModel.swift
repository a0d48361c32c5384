/// A Core Data model as its files describe it, before it becomes an EventGraph model.
///
/// What the three readers (XML `contents`, legacy `elements`, compiled `.mom`) produce and
/// what ``ModelFileWriter`` turns into a model file. Nothing here is checked yet beyond
/// what reading needs; the EventGraph model loader checks the result.
public struct CoreDataModel: Sendable, Equatable {
  public var entities: [CoreDataEntity] = []
  /// Model-level fetch request templates: name, entity and predicate text.
  public var fetchRequests: [CoreDataFetchRequest] = []
  /// Configurations: name and member entities.
  public var configurations: [(name: String, entities: [String])] = []
  public var userInfo: [String: String] = [:]
  /// What the reader kept in another form or left out (user info that is not text), in the
  /// words of the import's report.
  public var readNotes: [String] = []

  public init() {}

  public static func == (a: Self, b: Self) -> Bool {
    a.entities == b.entities && a.fetchRequests == b.fetchRequests && a.userInfo == b.userInfo
      && a.configurations.map(\.name) == b.configurations.map(\.name)
      && a.configurations.map(\.entities) == b.configurations.map(\.entities)
  }
}

public struct CoreDataFetchRequest: Sendable, Equatable {
  public var name: String
  public var entity: String
  public var predicate: String?
}

public struct CoreDataEntity: Sendable, Equatable {
  public var name: String
  public var className: String?
  public var parent: String?
  public var isAbstract = false
  public var renamingIdentifier: String?
  public var attributes: [CoreDataAttribute] = []
  public var relationships: [CoreDataRelationship] = []
  /// Fetched properties: name, entity and predicate (no EventGraph meaning yet).
  public var fetchedProperties: [CoreDataFetchRequest] = []
  public var uniquenessConstraints: [[String]] = []
  /// Fetch indexes: name and the properties they cover, in order.
  public var fetchIndexes: [(name: String, properties: [String])] = []
  public var userInfo: [String: String] = [:]

  public init(name: String) { self.name = name }

  public static func == (a: Self, b: Self) -> Bool {
    a.name == b.name && a.className == b.className && a.parent == b.parent && a.isAbstract == b.isAbstract
      && a.renamingIdentifier == b.renamingIdentifier && a.attributes == b.attributes
      && a.relationships == b.relationships && a.fetchedProperties == b.fetchedProperties
      && a.uniquenessConstraints == b.uniquenessConstraints && a.fetchIndexes.map(\.name) == b.fetchIndexes.map(\.name)
      && a.fetchIndexes.map(\.properties) == b.fetchIndexes.map(\.properties) && a.userInfo == b.userInfo
  }
}

/// Core Data's attribute types, by the names the XML model uses, with the numbers
/// (`NSAttributeType`) the archived forms use.
public enum CoreDataAttributeType: String, Sendable, CaseIterable {
  case undefined = "Undefined"
  case integer16 = "Integer 16"
  case integer32 = "Integer 32"
  case integer64 = "Integer 64"
  case decimal = "Decimal"
  case double = "Double"
  case float = "Float"
  case string = "String"
  case boolean = "Boolean"
  case date = "Date"
  case binary = "Binary"
  case uuid = "UUID"
  case uri = "URI"
  case transformable = "Transformable"
  case objectID = "ObjectID"
  case composite = "Composite"

  /// The type with this `NSAttributeType` number.
  public init?(number: Int64) {
    let table: [Int64: Self] = [
      0: .undefined, 100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float,
      700: .string, 800: .boolean, 900: .date, 1000: .binary, 1100: .uuid, 1200: .uri, 1800: .transformable,
      2000: .objectID, 2100: .composite,
    ]
    guard let t = table[number] else { return nil }
    self = t
  }

  /// The EventGraph type a value of this type is kept as; `nil` when none can hold it.
  public var eventGraphType: String? {
    switch self {
    case .integer16: "int16"
    case .integer32: "int32"
    case .integer64: "int64"
    case .decimal: "decimal"
    case .double: "double"
    case .float: "float"
    case .string: "string"
    case .boolean: "boolean"
    case .date: "date"
    case .binary, .transformable: "binary"
    case .uuid: "uuid"
    case .uri: "uri"
    case .undefined, .objectID, .composite: nil
    }
  }
}

public struct CoreDataAttribute: Sendable, Equatable {
  public var name: String
  public var type: CoreDataAttributeType
  public var isOptional = false
  public var isTransient = false
  /// A derived attribute's expression.
  public var derivation: String?
  /// The default as Core Data writes it: text (`defaultValueString`; seconds since 2001 for a date).
  public var defaultValue: String?
  /// Minimum and maximum: values for numbers and dates, lengths for strings and binary data.
  public var minValue: String?
  public var maxValue: String?
  public var regularExpression: String?
  /// A transformable attribute's value transformer.
  public var transformer: String?
  public var customClassName: String?
  public var renamingIdentifier: String?
  public var isIndexed = false
  public var userInfo: [String: String] = [:]

  public init(name: String, type: CoreDataAttributeType) {
    self.name = name
    self.type = type
  }
}

public struct CoreDataRelationship: Sendable, Equatable {
  public var name: String
  public var destination: String
  public var inverse: String?
  public var isToMany = false
  public var isOrdered = false
  public var isOptional = true
  public var isTransient = false
  public var minCount = 0
  /// 0: no maximum.
  public var maxCount = 0
  /// `nullify`, `cascade`, `deny` or `noAction`.
  public var deleteRule = "nullify"
  public var renamingIdentifier: String?
  public var userInfo: [String: String] = [:]

  public init(name: String, destination: String) {
    self.name = name
    self.destination = destination
  }

  /// The EventGraph delete rule for Core Data's `NSDeleteRule` number.
  static func deleteRule(number: Int64) -> String? {
    [0: "noAction", 1: "nullify", 2: "cascade", 3: "deny"][number]
  }

  /// The EventGraph delete rule for the XML model's `deletionRule` spelling.
  static func deleteRule(xml: String) -> String? {
    ["Nullify": "nullify", "Cascade": "cascade", "Deny": "deny", "No Action": "noAction"][xml]
  }
}
