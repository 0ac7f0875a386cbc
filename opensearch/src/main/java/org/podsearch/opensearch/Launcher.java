package org.podsearch.opensearch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * Starts one real OpenSearch node in this JVM, from OpenSearch's own jars on the classpath.
 *
 * <p>Usage, like the distribution's {@code bin/opensearch}: {@code Launcher [-E key=value]...}.
 * Defaults: HTTP on 127.0.0.1 at {@code $OPENSEARCH_PORT} (9200), netty4 HTTP and transport, a
 * single-node cluster unless {@code discovery.seed_hosts} is given, and a home folder
 * {@code $OPENSEARCH_HOME} (else a temporary folder removed at exit). The node stops on SIGTERM or
 * SIGINT, and also when standard input closes if {@code -Dpodsearch.stdin.watch=true}, so a parent
 * that dies leaves no JVM behind.
 */
public final class Launcher {

    /** The node's plugins: what the distribution ships as modules and podsearch needs. */
    static final List<Class<? extends Plugin>> PLUGINS =
            List.of(Netty4Plugin.class, CommonAnalysisPlugin.class, PainlessPlugin.class);

    /** Node's constructor taking an Environment and classpath plugins is protected: this opens it. */
    static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Settings.Builder given = Settings.builder();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String pair;
            if (arg.equals("-E") && i + 1 < args.length) {
                pair = args[++i];
            } else if (arg.startsWith("-E")) {
                pair = arg.substring(2);
            } else {
                System.err.println("usage: Launcher [-E key=value]...  (unknown argument: " + arg + ")");
                System.exit(2);
                return;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                System.err.println("expected -E key=value, got: " + pair);
                System.exit(2);
                return;
            }
            given.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        Settings cli = given.build();

        Path temporary = null;
        String home = cli.get("path.home", System.getenv("OPENSEARCH_HOME"));
        if (home == null || home.isEmpty()) {
            temporary = Files.createTempDirectory("podsearch-opensearch-");
            home = temporary.toString();
        }
        Path homePath = Path.of(home).toAbsolutePath();
        Files.createDirectories(homePath.resolve("config"));
        Files.createDirectories(homePath.resolve("plugins"));

        Settings.Builder settings = Settings.builder()
                .put("cluster.name", "podsearch-dev")
                .put("node.name", "node-1")
                .put("network.host", "127.0.0.1")
                .put("http.port", envOr("OPENSEARCH_PORT", "9200"))
                .put("http.type", "netty4")
                .put("transport.type", "netty4")
                .put("path.data", homePath.resolve("data").toString())
                .put("path.logs", homePath.resolve("logs").toString())
                // development defaults: no disk-watermark refusals on a nearly full test disk
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put(cli)
                .put("path.home", homePath.toString());
        if (settings.get("discovery.seed_hosts") == null && settings.get("discovery.type") == null) {
            settings.put("discovery.type", "single-node");
        }
        Settings finalSettings = settings.build();

        Path config = homePath.resolve("config");
        Path logConfig = config.resolve("log4j2.properties");
        if (Files.notExists(logConfig)) {
            try (InputStream in = Launcher.class.getResourceAsStream("/log4j2.properties")) {
                Files.copy(in, logConfig);
            }
        }
        LogConfigurator.registerErrorListener();
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
                finalSettings, Map.of(), config, () -> finalSettings.get("node.name"));
        LogConfigurator.setNodeName(environment.settings().get("node.name"));
        LogConfigurator.configure(environment);

        Node node = new EmbeddedNode(environment, PLUGINS);
        CountDownLatch stopped = new CountDownLatch(1);
        Path removeAtExit = temporary;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                if (removeAtExit != null) {
                    deleteTree(removeAtExit);
                }
                stopped.countDown();
            }
        }, "podsearch-opensearch-shutdown"));

        node.start();
        System.out.println("podsearch-opensearch: node " + environment.settings().get("node.name")
                + " started, HTTP on " + finalSettings.get("network.host") + ":" + finalSettings.get("http.port"));
        System.out.flush();

        if (Boolean.getBoolean("podsearch.stdin.watch")) {
            Thread watcher = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // nothing to read; end of input means the parent is gone
                    }
                } catch (IOException e) {
                    // treat a broken pipe like end of input
                }
                System.exit(0);
            }, "podsearch-opensearch-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        stopped.await();
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("podsearch-opensearch: could not remove " + root + ": " + e);
        }
    }
}
