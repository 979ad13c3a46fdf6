package deps
import (
	_ "github.com/IBM/sarama"
	_ "github.com/twmb/franz-go/pkg/kmsg"
	_ "github.com/twmb/franz-go/pkg/kerr"
	_ "github.com/go-zookeeper/zk"
	_ "github.com/urfave/cli/v2"
	_ "github.com/sirupsen/logrus"
	_ "github.com/rcrowley/go-metrics"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/klauspost/compress/snappy"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/eapache/go-xerial-snappy"
)
