import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Starts DynamoDB Local listening on one address only (the loopback by default). DynamoDB Local has
 * no bind-address option (3.3.0's -help: -port, -dbPath, -inMemory, -sharedDb, -cors, …): its
 * server makes a Jetty Server on a port, which listens on every interface. This launcher builds the
 * server exactly as DynamoDB Local's own main does, from the same arguments, then sets the host of
 * its Jetty connectors before starting it.
 *
 * Run in Java's source-file mode (needs a JDK):
 *   java -cp "DynamoDBLocal.jar:DynamoDBLocal_lib/*" LoopbackDynamoDBLocal.java <host> <DynamoDB Local args…>
 */
public class LoopbackDynamoDBLocal {
  public static void main(String[] args) throws Exception {
    String host = args[0];
    String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
    Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) rest);
    Field serverField = proxy.getClass().getDeclaredField("server");
    serverField.setAccessible(true);
    Object server = serverField.get(proxy);
    Object[] connectors = (Object[]) server.getClass().getMethod("getConnectors").invoke(server);
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local made no connector to bind");
    for (Object connector : connectors) {
      Method setHost = connector.getClass().getMethod("setHost", String.class);
      setHost.invoke(connector, host);
    }
    proxy.getClass().getMethod("start").invoke(proxy);
    System.out.println("DynamoDB Local listening on " + host);
  }
}
