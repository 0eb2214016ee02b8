// Pipeline events over real PUB/SUB sockets: delivery, catch-up of late subscribers from the
// last-value cache, survival of publisher restarts, duplicate suppression and exact topics.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "ipc/endpoint.h"
#include "ipc/event.h"
#include "ipc/event_publisher.h"
#include "ipc/event_subscriber.h"
#include "ipc/file_util.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(10);
// How long a test waits to be sure nothing more arrives: absence cannot be proven, only sampled.
constexpr auto kQuiet = std::chrono::milliseconds(300);

std::unique_ptr<EventPublisher> MakePublisher(const std::string& run_dir) {
  Result<std::unique_ptr<EventPublisher>> made =
      EventPublisher::Create({.service = "learner", .run_dir = run_dir});
  AZ_CHECK(made.ok(), made.status().ToString());
  return std::move(made).value();
}

EventSubscriber MakeSubscriber(const std::string& run_dir, std::vector<std::string> topics = {}) {
  Result<EventSubscriber> made = EventSubscriber::Create(
      {.endpoints = {*EventsEndpoint(run_dir, "learner")}, .topics = std::move(topics)});
  AZ_CHECK(made.ok(), made.status().ToString());
  return std::move(made).value();
}

Result<Event> PublishModel(EventPublisher& publisher, std::int64_t version) {
  return publisher.Publish(kModelTopic,
                           ModelPublishedToJson({.version = version,
                                                 .path = "/m/" + std::to_string(version),
                                                 .checksum = "c" + std::to_string(version)}));
}

std::int64_t ModelVersion(const Result<Event>& event) {
  AZ_CHECK(event.ok(), event.status().ToString());
  Result<ModelPublished> model = ModelPublishedFromEvent(*event);
  AZ_CHECK(model.ok(), model.status().ToString());
  return model->version;
}

TEST(IpcEventsTest, SubscriberReceivesTheModelEventWithAllItsFields) {
  TempDir dir;
  auto publisher = MakePublisher(dir.path());
  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  Result<Event> published = PublishModel(*publisher, 7);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  Result<Event> received = subscriber.Next(kWait);
  ASSERT_TRUE(received.ok()) << received.status().ToString();
  EXPECT_EQ(received->topic, "model");
  EXPECT_EQ(received->publisher, "learner");
  EXPECT_EQ(received->seq, published->seq);
  EXPECT_EQ(received->incarnation, publisher->incarnation());
  Result<ModelPublished> model = ModelPublishedFromEvent(*received);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->version, 7);
  EXPECT_EQ(model->path, "/m/7");
  EXPECT_EQ(model->checksum, "c7");
}

TEST(IpcEventsTest, LateSubscriberGetsTheLatestEventOfEachTopic) {
  TempDir dir;
  auto publisher = MakePublisher(dir.path());
  // A witness that sees every event as it is sent, so the ones below are late for certain.
  EventSubscriber witness = MakeSubscriber(dir.path());
  for (int version = 1; version <= 3; ++version)
    ASSERT_TRUE(PublishModel(*publisher, version).ok());
  ASSERT_TRUE(publisher->Publish("replay.snapshot", {{"path", "/s/1"}}).ok());
  const std::uint64_t last_model = publisher->Latest("model")->seq;
  const std::uint64_t last_snapshot = publisher->Latest("replay.snapshot")->seq;
  std::set<std::uint64_t> witnessed;
  while (!witnessed.contains(last_model) || !witnessed.contains(last_snapshot)) {
    Result<Event> event = witness.Next(kWait);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    witnessed.insert(event->seq);
  }

  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  EXPECT_EQ(ModelVersion(subscriber.Next(kWait)), 3);
  EXPECT_EQ(subscriber.Next(kQuiet).status().code(), StatusCode::kDeadlineExceeded);
  // Then the events published after it joined.
  ASSERT_TRUE(PublishModel(*publisher, 4).ok());
  EXPECT_EQ(ModelVersion(subscriber.Next(kWait)), 4);

  EventSubscriber everything = MakeSubscriber(dir.path());
  std::map<std::string, std::uint64_t> seq_by_topic;
  for (int i = 0; i < 2; ++i) {
    Result<Event> event = everything.Next(kWait);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    seq_by_topic[event->topic] = event->seq;
  }
  EXPECT_EQ(seq_by_topic.size(), 2u);
  EXPECT_EQ(seq_by_topic["model"], publisher->Latest("model")->seq);
  EXPECT_EQ(seq_by_topic["replay.snapshot"], publisher->Latest("replay.snapshot")->seq);
  EXPECT_EQ(everything.Next(kQuiet).status().code(), StatusCode::kDeadlineExceeded);
}

TEST(IpcEventsTest, SubscriberStartedBeforeThePublisherGetsItsEvents) {
  TempDir dir;
  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  EXPECT_EQ(subscriber.Next(std::chrono::milliseconds(50)).status().code(),
            StatusCode::kDeadlineExceeded);
  auto publisher = MakePublisher(dir.path());
  ASSERT_TRUE(PublishModel(*publisher, 1).ok());
  EXPECT_EQ(ModelVersion(subscriber.Next(kWait)), 1);
}

TEST(IpcEventsTest, WelcomeOfAnotherSubscriberIsNotDeliveredTwice) {
  TempDir dir;
  auto publisher = MakePublisher(dir.path());
  EventSubscriber first = MakeSubscriber(dir.path(), {"model"});
  ASSERT_TRUE(PublishModel(*publisher, 1).ok());
  EXPECT_EQ(ModelVersion(first.Next(kWait)), 1);
  // The second subscriber's welcome goes to every subscriber of "model".
  EventSubscriber second = MakeSubscriber(dir.path(), {"model"});
  EXPECT_EQ(ModelVersion(second.Next(kWait)), 1);
  EXPECT_EQ(first.Next(kQuiet).status().code(), StatusCode::kDeadlineExceeded);
}

TEST(IpcEventsTest, RestartedPublisherStillServesItsLastEventAndContinuesTheSequence) {
  TempDir dir;
  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  std::uint64_t last_seq = 0;
  {
    auto publisher = MakePublisher(dir.path());
    ASSERT_TRUE(PublishModel(*publisher, 1).ok());
    last_seq = PublishModel(*publisher, 2)->seq;
    // Drain what arrived (1 may have been skipped by the catch-up; 2 must come).
    std::int64_t version = 0;
    while (version != 2) version = ModelVersion(subscriber.Next(kWait));
  }
  ASSERT_TRUE(std::filesystem::exists(dir.path() + "/learner.events.json"));
  auto restarted = MakePublisher(dir.path());
  std::optional<Event> latest = restarted->Latest(kModelTopic);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->seq, last_seq);
  // The connected subscriber gets the replay of model 2 again on reconnect, and drops it.
  EXPECT_EQ(subscriber.Next(kQuiet).status().code(), StatusCode::kDeadlineExceeded);
  // A subscriber that never saw it gets it.
  EventSubscriber late = MakeSubscriber(dir.path(), {"model"});
  EXPECT_EQ(ModelVersion(late.Next(kWait)), 2);
  // New events continue the sequence and reach both.
  Result<Event> third = PublishModel(*restarted, 3);
  ASSERT_TRUE(third.ok());
  EXPECT_GT(third->seq, last_seq);
  EXPECT_EQ(ModelVersion(subscriber.Next(kWait)), 3);
  EXPECT_EQ(ModelVersion(late.Next(kWait)), 3);
}

TEST(IpcEventsTest, CorruptLastValueFileIsIgnored) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/learner.events.json", "{garbage").ok());
  auto publisher = MakePublisher(dir.path());
  EXPECT_FALSE(publisher->Latest(kModelTopic).has_value());
  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  ASSERT_TRUE(PublishModel(*publisher, 1).ok());
  EXPECT_EQ(ModelVersion(subscriber.Next(kWait)), 1);
}

TEST(IpcEventsTest, TopicsMatchExactlyNotByPrefix) {
  TempDir dir;
  auto publisher = MakePublisher(dir.path());
  EventSubscriber subscriber = MakeSubscriber(dir.path(), {"model"});
  ASSERT_TRUE(publisher->Publish("model-draft", {{"version", 9}}).ok());
  ASSERT_TRUE(PublishModel(*publisher, 5).ok());
  Result<Event> event = subscriber.Next(kWait);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->topic, "model");
  EXPECT_EQ(subscriber.Next(kQuiet).status().code(), StatusCode::kDeadlineExceeded);
}

TEST(IpcEventsTest, BadTopicsAndOptionsAreRefused) {
  TempDir dir;
  auto publisher = MakePublisher(dir.path());
  EXPECT_EQ(publisher->Publish("", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(publisher->Publish("Model!", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(EventSubscriber::Create({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      EventSubscriber::Create({.endpoints = {"ipc:///tmp/x"}, .topics = {"A B"}}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(EventPublisher::Create({.service = "p"}).status().code(), StatusCode::kInvalidArgument);
  // Another publisher on the same endpoint is refused while the first lives.
  EXPECT_EQ(EventPublisher::Create({.service = "learner", .run_dir = dir.path()}).status().code(),
            StatusCode::kAlreadyExists);
}

TEST(IpcEventsTest, ModelEventHelpersCheckTheTopicAndFields) {
  Event event;
  event.topic = "model";
  event.data = {{"version", 3}, {"path", "/x"}};
  EXPECT_EQ(ModelPublishedFromEvent(event).status().code(), StatusCode::kDataLoss);
  event.topic = "other";
  EXPECT_EQ(ModelPublishedFromEvent(event).status().code(), StatusCode::kInvalidArgument);
  Event round = *EventFromJson(EventToJson(Event{.topic = "model",
                                                 .seq = 4,
                                                 .publisher = "l",
                                                 .incarnation = "i",
                                                 .time_unix_ms = 5,
                                                 .data = {{"a", 1}}}));
  EXPECT_EQ(round.seq, 4u);
  EXPECT_EQ(round.data["a"], 1);
  EXPECT_EQ(EventFromJson(nlohmann::json::array()).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace az::ipc
